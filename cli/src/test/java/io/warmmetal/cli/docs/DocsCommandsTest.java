package io.warmmetal.cli.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.warmmetal.api.testing.ApiProcess;
import io.warmmetal.api.testing.Readiness;
import io.warmmetal.api.testing.RequiredTool;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/**
 * Runs the commands of the README and {@code docs/*.md}, so a broken command fails the build. Per
 * page, in page order: every {@code ```sh} and {@code ```bash} block not marked {@code <!-- not
 * run: reason -->}, one bash session for the page (its variables carry from block to block), with
 * {@code set -eo pipefail} (a failing command fails its block) and {@code curl} failing on an HTTP
 * error status (as {@code --fail-with-body}: a request the API refuses is a broken command; a block
 * that shows a refusal on purpose ends it with {@code || true}). Each page gets:
 *
 * <ul>
 *   <li>a working directory of its own in the temporary directory, holding a link to each entry of
 *       the repository root — so {@code api/target/…}, {@code cli/bin} and {@code .ci/…} resolve as
 *       in a checkout while what the commands write ({@code warmmetal-data}, files like {@code
 *       launch.json}) stays out of the work tree — and a {@code HOME} of its own there (the CLI's
 *       config file); no {@code WARMMETAL_*} variable; {@code cli/bin} first on the {@code PATH};
 *   <li>the real API ({@code api/target/warmmetal-api.jar} as a process, the embedded PostgreSQL in
 *       {@code ./warmmetal-data}) started as the page starts it — with the flags of the page's
 *       first {@code java -jar …/warmmetal-api.jar} line (e.g. {@code --demo 3}: the simulated
 *       fleet) — on free loopback ports: a block's {@code localhost:8080} and {@code
 *       127.0.0.1:8080} (the API), {@code :8443} (the agent port) and {@code :9090} (the management
 *       port) are rewritten to them. Only the ports differ from what a reader gets.
 * </ul>
 *
 * A page sets up what it uses (the CLI's API URL and token, shell variables), as a reader following
 * only that page would. A failure names the page, the block's line, the failing command and line,
 * and shows the block's output and the API's log. Blocks that build or start servers must be marked
 * not run ({@link DocsSyntaxTest} says so before anything runs). {@code
 * -Dwarmmetal.docs.page=getting-started} runs only the pages whose path contains that.
 */
@Tag("processes")
class DocsCommandsTest {
  private static final Duration PAGE_TIMEOUT = Duration.ofSeconds(150);
  private static final Duration API_START = Duration.ofSeconds(90);
  private static final Path API_JAR = DocPages.ROOT.resolve("api/target/warmmetal-api.jar");
  private static final Path CLI_BIN = DocPages.ROOT.resolve("cli/bin");

  /**
   * Tools the pages use, by their Debian package: a page that runs one fails at once, naming it, if
   * it is missing.
   */
  private static final Map<String, String> TOOLS =
      Map.of("curl", "curl", "jq", "jq", "awk", "mawk", "aws", "awscli");

  @TestFactory
  Stream<DynamicTest> everyRunBlockOfEveryPageSucceeds() throws IOException {
    List<DynamicTest> tests = new ArrayList<>();
    int run = 0;
    String only = System.getProperty("warmmetal.docs.page", "");
    for (String page : DocPages.pages().stream().filter(p -> p.contains(only)).toList()) {
      List<ShellBlock> blocks = ShellBlock.read(DocPages.ROOT, page);
      long runs = blocks.stream().filter(ShellBlock::runs).count();
      run += runs;
      tests.add(
          DynamicTest.dynamicTest(
              page + " (" + runs + " of " + blocks.size() + " shell blocks run)",
              () -> runPage(page, blocks)));
    }
    assertThat(run)
        .as("shell blocks run from the README and docs/ (pages containing '%s')", only)
        .isPositive();
    return tests.stream();
  }

  private static void runPage(String page, List<ShellBlock> blocks) throws Exception {
    List<ShellBlock> runs = blocks.stream().filter(ShellBlock::runs).toList();
    if (runs.isEmpty()) {
      return;
    }
    // Never run a build or a server from here (a build would rewrite the jars under test): the
    // rule's own test says so
    // for every page before anything runs; this page fails on it without running a block.
    assertThat(DocsSyntaxTest.buildsOrServers(runs))
        .as(
            page
                + ": blocks that build or start a server must be marked <!-- not run: reason --> "
                + "(nothing of this page was run)")
        .isEmpty();
    assertThat(API_JAR).as("the API jar (mvn -B verify -Pprocesses packages it first)").exists();
    RequiredTool.onPath("setsid", "util-linux");
    runs.stream()
        .flatMap(b -> Invocation.in(b).stream())
        .map(Invocation::program)
        .distinct()
        .filter(TOOLS::containsKey)
        .forEach(tool -> RequiredTool.onPath(tool, TOOLS.get(tool)));
    // 0711, as the API makes its data directory: the embedded PostgreSQL, run as its own user when
    // the tests run as
    // root, must reach ./warmmetal-data inside it (or it keeps its cluster elsewhere, outside the
    // page's directory).
    Path work = Files.createTempDirectory("warmmetal-docs-" + page.replaceAll("\\W", "-") + "-");
    Files.setPosixFilePermissions(work, PosixFilePermissions.fromString("rwx--x--x"));
    boolean passed = false;
    try (Api api = Api.start(work, apiFlags(blocks))) {
      PageRun result = PageRun.run(page, runs, DocPages.lines(page).size(), work, api);
      if (!result.succeeded()) {
        throw new AssertionError(
            result.report()
                + "\n--- the API's log (last 30 lines):\n"
                + api.logTail(30)
                + "\n(the page's directory is kept: "
                + work
                + ")");
      }
      passed = true;
    } finally {
      if (passed) {
        deleteTree(work);
      }
    }
  }

  /**
   * The flags of the page's first {@code java -jar …/warmmetal-api.jar} line that starts the server
   * (run or not; a subcommand such as {@code init-ca} does not), else none.
   */
  static List<String> apiFlags(List<ShellBlock> blocks) {
    return blocks.stream()
        .flatMap(b -> Invocation.in(b).stream())
        .filter(c -> c.program().equals("warmmetal-api.jar"))
        .filter(c -> c.args().isEmpty() || c.args().get(0).startsWith("-"))
        .findFirst()
        .map(Invocation::args)
        .orElse(List.of());
  }

  /** The API as the page starts it, in the page's directory, on free loopback ports. */
  record Api(int http, int agent, int metrics, Path log, Process process) implements AutoCloseable {
    static Api start(Path work, List<String> flags) throws Exception {
      int http = ApiProcess.freePort();
      int agent = ApiProcess.freePort();
      int metrics = ApiProcess.freePort();
      List<String> command =
          new ArrayList<>(List.of(ApiProcess.java(), "-jar", API_JAR.toString()));
      command.addAll(flags);
      Path log = work.resolve("api.log");
      ProcessBuilder builder =
          new ProcessBuilder(command)
              .directory(work.toFile())
              .redirectErrorStream(true)
              .redirectOutput(log.toFile());
      Map<String, String> env = builder.environment();
      env.keySet().removeIf(k -> k.startsWith("WARMMETAL_"));
      env.putAll(
          Map.of(
              "WARMMETAL_HTTP_HOST",
              "127.0.0.1",
              "WARMMETAL_HTTP_PORT",
              String.valueOf(http),
              "WARMMETAL_AGENT_HOST",
              "127.0.0.1",
              "WARMMETAL_AGENT_PORT",
              String.valueOf(agent),
              "WARMMETAL_METRICS_PORT",
              String.valueOf(metrics)));
      Api api = new Api(http, agent, metrics, log, builder.start());
      try {
        api.awaitReady();
      } catch (Throwable e) {
        api.close();
        throw e;
      }
      return api;
    }

    private void awaitReady() throws Exception {
      Readiness.await("the API", process, http, "/readyz", API_START, () -> logTail(40));
    }

    /** The documented default ports, as the page writes them, rewritten to this API's. */
    String rewrite(String line) {
      return line.replaceAll("\\b(localhost|127\\.0\\.0\\.1):8080\\b", "127.0.0.1:" + http)
          .replaceAll("\\b(localhost|127\\.0\\.0\\.1):8443\\b", "127.0.0.1:" + agent)
          .replaceAll("\\b(localhost|127\\.0\\.0\\.1):9090\\b", "127.0.0.1:" + metrics);
    }

    String logTail(int lines) {
      return PageRun.tail(log, lines);
    }

    @Override
    public void close() throws Exception {
      process.destroy(); // SIGTERM: the API stops its demo fleet and its embedded PostgreSQL
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  /** One page's bash session: its script, its output, and what failed. */
  record PageRun(
      String page,
      List<ShellBlock> runs,
      Path output,
      Optional<Integer> exit,
      List<String> failedLines,
      List<String> failedCommands) {

    static PageRun run(String page, List<ShellBlock> runs, int pageLines, Path work, Api api)
        throws Exception {
      Path state = Files.createDirectories(work.resolve(".docs-test"));
      Path home = Files.createDirectories(work.resolve("home"));
      linkRepository(work);
      Path script = state.resolve("page.sh");
      Files.writeString(
          script, DocPages.script(pageLines, runs, b -> "__block " + b.fenceLine(), api::rewrite));
      Path preamble = state.resolve("preamble.sh");
      Files.writeString(
          preamble,
          String.join(
              "\n",
              "set -Eeo pipefail",
              "__block() { printf '\\n::: %s:%s\\n' " + quote(page) + " \"$1\"; }",
              "trap 'echo \"$LINENO\" >> "
                  + quote(state + "/failed-lines")
                  + "; printf \"%s\\n\" \"$BASH_COMMAND\" >> "
                  + quote(state + "/failed-commands")
                  + "' ERR",
              "curl() { command curl --fail-with-body \"$@\"; }",
              "source " + quote(script.toString()),
              ""));
      Path output = state.resolve("output.log");
      // A session of its own, so whatever the page leaves running in the background can be stopped
      // with it.
      ProcessBuilder builder =
          new ProcessBuilder("setsid", "bash", "--noprofile", "--norc", preamble.toString())
              .directory(work.toFile())
              .redirectErrorStream(true)
              .redirectOutput(output.toFile())
              .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
      Map<String, String> env = builder.environment();
      env.keySet()
          .removeIf(
              k ->
                  k.startsWith("WARMMETAL_")
                      || k.equals("XDG_CONFIG_HOME")
                      || k.equals("BASH_ENV"));
      env.put("HOME", home.toString());
      env.put("PATH", CLI_BIN + ":" + env.getOrDefault("PATH", "/usr/bin:/bin"));
      Process bash = builder.start();
      boolean finished = bash.waitFor(PAGE_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
      stopGroup(bash.pid());
      if (!finished) {
        bash.waitFor(10, TimeUnit.SECONDS);
      }
      return new PageRun(
          page,
          runs,
          output,
          finished ? Optional.of(bash.exitValue()) : Optional.empty(),
          readIfExists(state.resolve("failed-lines")),
          readIfExists(state.resolve("failed-commands")));
    }

    boolean succeeded() {
      return exit.isPresent() && exit.get() == 0;
    }

    /** Which block failed (or hung), the command and its line, and what the block printed. */
    String report() {
      List<String> out = readIfExists(output);
      String started =
          out.stream().filter(l -> l.startsWith("::: ")).reduce((a, b) -> b).orElse("");
      Optional<Integer> failedLine = failedLines.stream().findFirst().map(Integer::parseInt);
      Optional<ShellBlock> block =
          failedLine
              .flatMap(l -> runs.stream().filter(b -> b.contains(l)).findFirst())
              .or(
                  () ->
                      runs.stream()
                          .filter(b -> started.equals("::: " + page + ":" + b.fenceLine()))
                          .findFirst());
      StringBuilder report = new StringBuilder();
      if (exit.isEmpty()) {
        report
            .append(page)
            .append(": timed out after ")
            .append(PAGE_TIMEOUT.toSeconds())
            .append(" s in the block at ")
            .append(block.map(ShellBlock::where).orElse("(none started)"));
      } else {
        report
            .append(page)
            .append(": the block at ")
            .append(block.map(ShellBlock::where).orElse("(unknown)"))
            .append(" failed (bash exit status ")
            .append(exit.get())
            .append(")");
        failedLine.ifPresent(
            l ->
                report
                    .append(", at line ")
                    .append(l)
                    .append(": ")
                    .append(failedCommands.isEmpty() ? "" : failedCommands.get(0)));
      }
      int from = block.map(b -> out.indexOf("::: " + page + ":" + b.fenceLine())).orElse(-1);
      List<String> printed = out.subList(Math.max(0, Math.max(from, out.size() - 80)), out.size());
      report
          .append("\n--- its output")
          .append(from >= 0 && out.size() - from > 80 ? " (last 80 lines)" : "")
          .append(":\n")
          .append(String.join("\n", printed));
      return report.toString();
    }

    /**
     * Links each entry of the repository root into the page's directory (not a data directory left
     * there).
     */
    private static void linkRepository(Path work) throws IOException {
      try (Stream<Path> entries = Files.list(DocPages.ROOT)) {
        for (Path entry : entries.toList()) {
          String name = entry.getFileName().toString();
          if (!name.equals("warmmetal-data") && !Files.exists(work.resolve(name))) {
            Files.createSymbolicLink(work.resolve(name), entry);
          }
        }
      }
    }

    private static void stopGroup(long pgid) throws Exception {
      for (String signal : List.of("-TERM", "-KILL")) {
        new ProcessBuilder("kill", signal, "--", "-" + pgid)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start()
            .waitFor(10, TimeUnit.SECONDS);
      }
    }

    private static String quote(String s) {
      return "'" + s.replace("'", "'\\''") + "'";
    }

    static String tail(Path file, int lines) {
      List<String> all = readIfExists(file);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    }

    static List<String> readIfExists(Path file) {
      try {
        // Leniently: a command may print bytes that are not UTF-8.
        return Files.exists(file)
            ? new String(Files.readAllBytes(file), StandardCharsets.UTF_8).lines().toList()
            : List.of();
      } catch (IOException e) {
        return List.of("(unreadable: " + e.getMessage() + ")");
      }
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p); // links are removed, never followed
      }
    }
  }
}
