package io.warmmetal.cli.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.warmmetal.api.Main;
import io.warmmetal.cli.WarmMetal;
import io.warmmetal.cli.session.Session;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Every {@code ```sh} and {@code ```bash} block of the README and {@code docs/*.md} — run by {@link
 * DocsCommandsTest} or marked {@code <!-- not run: reason -->} — is valid bash ({@code bash -n}),
 * and every command line of this project in it parses: the {@code warmmetal} CLI's subcommands and
 * options, and the API's, fleet simulator's and agent's flags (picocli parses them without running
 * anything). A block that is run must not build (the tests run on the packaged jars) nor start the
 * API, the fleet or an agent (servers that run until stopped: the docs test starts the page's API
 * itself, as the page's not-run block does). Each failure names the page and line.
 */
class DocsSyntaxTest {
  private static final Map<String, Supplier<Object>> COMMANDS =
      Map.of(
          "warmmetal",
              () ->
                  new WarmMetal(
                      new Session(
                          Map.of(),
                          new ByteArrayInputStream(new byte[0]),
                          new PrintWriter(new StringWriter()),
                          new PrintWriter(new StringWriter()),
                          Clock.systemUTC())),
          "warmmetal-api.jar",
              Main::new, // the fleet's and the agent's Main share the name: qualified
          "warmmetal-fleet.jar", io.warmmetal.fleet.Main::new,
          "warmmetal-agent.jar", io.warmmetal.agent.Main::new);

  /** Commands a run block may not hold: a build, and the servers (they run until stopped). */
  private static final Set<String> NOT_IN_RUN_BLOCKS =
      Set.of("mvn", "warmmetal-api.jar", "warmmetal-fleet.jar", "warmmetal-agent.jar");

  @Test
  void everyShellBlockIsValidBash() throws Exception {
    List<String> problems = new ArrayList<>();
    int blocks = 0;
    for (String page : DocPages.pages()) {
      List<String> lines = DocPages.lines(page);
      List<ShellBlock> shell = ShellBlock.parse(page, lines);
      blocks += shell.size();
      if (shell.isEmpty()) {
        continue;
      }
      Path script = Files.createTempFile("docs-syntax", ".sh");
      try {
        Files.writeString(script, DocPages.script(lines.size(), shell, b -> "", l -> l));
        Process bash =
            new ProcessBuilder("bash", "-n", script.toString()).redirectErrorStream(true).start();
        String out = new String(bash.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(bash.waitFor(30, TimeUnit.SECONDS)).isTrue();
        if (bash.exitValue() != 0) {
          problems.add(
              page
                  + ": bash -n says (line numbers are the page's):\n"
                  + out.replace(script.toString(), page));
        }
      } finally {
        Files.delete(script);
      }
    }
    assertThat(blocks).as("shell blocks found in the README and docs/").isPositive();
    assertThat(problems).as("shell blocks that are not valid bash").isEmpty();
  }

  @Test
  void everyNotRunMarkerSaysWhyAndMarksAShellBlock() throws Exception {
    List<String> problems = new ArrayList<>();
    for (String page : DocPages.pages()) {
      List<String> lines = DocPages.lines(page);
      List<ShellBlock> marked =
          ShellBlock.parse(page, lines).stream().filter(b -> !b.runs()).toList();
      int markers = 0;
      for (int i = 0; i < lines.size(); i++) {
        if (ShellBlock.isMarker(lines.get(i))) {
          markers++;
          int line = i + 1;
          if (marked.stream()
              .noneMatch(
                  b ->
                      b.fenceLine() > line
                          && lines.subList(line, b.fenceLine() - 1).stream()
                              .allMatch(String::isBlank))) {
            problems.add(
                page + ":" + line + ": a not-run marker with no ```sh or ```bash block after it");
          }
        }
      }
      marked.stream()
          .filter(b -> b.notRun().isEmpty())
          .forEach(
              b ->
                  problems.add(
                      b.where() + ": says `not run` but not why (<!-- not run: reason -->)"));
      assertThat(marked).as(page + ": marked blocks").hasSizeLessThanOrEqualTo(markers);
    }
    assertThat(problems).isEmpty();
  }

  @Test
  void everyCommandLineOfThisProjectParses() throws Exception {
    List<Invocation> calls =
        DocPages.allBlocks().stream()
            .flatMap(b -> Invocation.in(b).stream())
            .filter(c -> COMMANDS.containsKey(c.program()))
            .toList();
    List<String> problems = new ArrayList<>();
    for (Invocation call : calls) {
      try {
        new CommandLine(COMMANDS.get(call.program()).get())
            .parseArgs(call.args().toArray(String[]::new));
      } catch (CommandLine.ParameterException e) {
        problems.add(call.where() + "\n    " + e.getMessage());
      }
    }
    assertThat(calls)
        .as("command lines of warmmetal and the jars found in the README and docs/")
        .isNotEmpty();
    assertThat(problems).as("command lines that do not parse").isEmpty();
  }

  /** The run blocks' builds and servers, each named by its block and line. */
  static List<String> buildsOrServers(List<ShellBlock> blocks) {
    return blocks.stream()
        .filter(ShellBlock::runs)
        .flatMap(
            b ->
                Invocation.in(b).stream()
                    .filter(c -> NOT_IN_RUN_BLOCKS.contains(c.program()))
                    .map(c -> b.where() + ": runs " + c.program() + " (line " + c.line() + ")"))
        .toList();
  }

  @Test
  void blocksThatRunNeitherBuildNorStartServers() throws Exception {
    assertThat(buildsOrServers(DocPages.allBlocks()))
        .as(
            "run blocks that build or start a server: mark each <!-- not run: reason --> (the docs "
                + "test runs on the packaged jars, and starts the page's API as the page's not-run block does)")
        .isEmpty();
  }
}
