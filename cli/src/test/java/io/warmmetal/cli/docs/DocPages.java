package io.warmmetal.cli.docs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

/**
 * The pages whose commands the docs tests check: the README, then {@code docs/*.md} in name order.
 */
final class DocPages {
  /** The repository root (the tests run in the cli module). */
  static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  private DocPages() {}

  static List<String> pages() throws IOException {
    List<String> pages = new ArrayList<>(List.of("README.md"));
    try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
      docs.map(p -> "docs/" + p.getFileName())
          .filter(p -> p.endsWith(".md"))
          .sorted()
          .forEach(pages::add);
    }
    return pages;
  }

  /** Every page's shell blocks, page after page. */
  static List<ShellBlock> allBlocks() throws IOException {
    List<ShellBlock> blocks = new ArrayList<>();
    for (String page : pages()) {
      blocks.addAll(ShellBlock.read(ROOT, page));
    }
    return blocks;
  }

  static List<String> lines(String page) throws IOException {
    return Files.readAllLines(ROOT.resolve(page));
  }

  /**
   * The page as a bash script whose line numbers are the page's: each given block's lines where
   * they stand, its opening fence line replaced by {@code fence} (a command, or empty), every other
   * line empty — so bash's errors and {@code $LINENO} name page lines.
   */
  static String script(
      int pageLines,
      List<ShellBlock> blocks,
      Function<ShellBlock, String> fence,
      UnaryOperator<String> rewrite) {
    String[] script = new String[pageLines + 1];
    Arrays.fill(script, "");
    for (ShellBlock block : blocks) {
      script[block.fenceLine() - 1] = fence.apply(block);
      for (int i = 0; i < block.lines().size(); i++) {
        script[block.lineOf(i) - 1] = rewrite.apply(block.lines().get(i));
      }
    }
    return String.join("\n", script);
  }
}
