package io.warmmetal.cli.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * How the docs tests read a page: its shell blocks, their not-run markers, and the command lines in
 * them.
 */
class ShellBlockTest {
  private static final List<String> PAGE =
      List.of(
          "# A page", // 1
          "", // 2
          "```sh", // 3
          "export PATH=$PWD/cli/bin:$PATH", // 4
          "```", // 5
          "<!-- not run: needs root -->", // 6
          "", // 7
          "```bash", // 8
          "sudo warmmetal shapes ls", // 9
          "```", // 10
          "````markdown", // 11
          "```sh", // 12
          "not a block of its own", // 13
          "```", // 14
          "````", // 15
          "<!-- not run: the marker is not the line before -->", // 16
          "Prose between.", // 17
          "- a list:", // 18
          "  ```sh", // 19
          "  warmmetal pools get", // 20
          "  ```", // 21
          "```yaml", // 22
          "a: b", // 23
          "```"); // 24

  @Test
  void blocksKeepTheirPageLinesAndTheirMarkers() {
    List<ShellBlock> blocks = ShellBlock.parse("p.md", PAGE);
    assertThat(blocks).extracting(ShellBlock::fenceLine).containsExactly(3, 8, 19);
    assertThat(blocks).extracting(ShellBlock::notRun).containsExactly(null, "needs root", null);
    assertThat(blocks.get(0).lines()).containsExactly("export PATH=$PWD/cli/bin:$PATH");
    assertThat(blocks.get(2).lines())
        .as("the list's indentation removed")
        .containsExactly("warmmetal pools get");
    assertThat(blocks.get(2).lineOf(0)).isEqualTo(20);
    assertThat(blocks.get(2).contains(20)).isTrue();
    assertThat(blocks.get(2).contains(21)).isFalse();
    assertThat(
            DocPages.script(PAGE.size(), blocks, b -> "__block " + b.fenceLine(), l -> l)
                .split("\n", -1))
        .as("a script whose line n is the page's line n")
        .hasSize(PAGE.size() + 1)
        .satisfies(
            lines -> {
              assertThat(lines[2]).isEqualTo("__block 3");
              assertThat(lines[8]).isEqualTo("sudo warmmetal shapes ls");
              assertThat(lines[12]).isEmpty();
              assertThat(lines[19]).isEqualTo("warmmetal pools get");
            });
  }

  private static List<Invocation> calls(String... lines) {
    return Invocation.in(new ShellBlock("p.md", 10, List.of(lines), null));
  }

  @Test
  void commandLinesAreFoundThroughPipesListsSubstitutionsAndContinuations() {
    List<Invocation> calls =
        calls(
            "source <(warmmetal completion bash)          # or: source <(warmmetal completion zsh)",
            "I=$(warmmetal instances ls -l 'team=ml x' | awk 'NR == 2 {print $1}') && warmmetal instances terminate $I",
            "warmmetal config set token - < warmmetal-data/admin-token 2>&1 >/dev/null; echo done",
            "WARMMETAL_API=http://x java -Xmx64m -jar api/target/warmmetal-api.jar --demo 5 &",
            "cli/bin/warmmetal instances launch --shape x86 \\",
            "  --label \"team=$TEAM\" --wait");
    assertThat(calls)
        .extracting(c -> c.program() + " " + String.join(" ", c.args()))
        .containsExactly(
            "warmmetal completion bash",
            "source 1",
            "warmmetal instances ls -l team=ml x",
            "awk NR == 2 {print $1}",
            "warmmetal instances terminate 1",
            "warmmetal config set token -",
            "echo done",
            "warmmetal-api.jar --demo 5",
            "warmmetal instances launch --shape x86 --label team=1 --wait");
    assertThat(calls)
        .extracting(Invocation::line)
        .containsExactly(11, 11, 12, 12, 12, 13, 13, 14, 15);
    assertThat(calls).filteredOn(Invocation::ours).hasSize(6);
  }

  @Test
  void aPlaceholderInAngleBracketsIsARedirectionAsBashReadsIt() {
    assertThat(
            calls("java -jar fleet.jar/warmmetal-fleet.jar --ca-pin sha256:<pin> --token-file t"))
        .singleElement()
        .extracting(Invocation::args)
        .isEqualTo(List.of("--ca-pin", "sha256:", "t"));
  }
}
