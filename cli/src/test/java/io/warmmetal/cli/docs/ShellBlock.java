package io.warmmetal.cli.docs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A {@code ```sh} or {@code ```bash} block of a Markdown page: where it is (the line of its opening
 * fence, 1-based), its lines, and — if the line before it (blank lines aside) is {@code <!-- not
 * run: reason -->} — why the docs tests do not run it. Other fenced blocks are skipped whole, so a
 * fence inside them is not mistaken for a block.
 */
public record ShellBlock(String page, int fenceLine, List<String> lines, String notRun) {
  private static final Pattern OPENING = Pattern.compile("^(\\s*)(`{3,}|~{3,})\\s*([^\\s`]*).*$");
  private static final Pattern NOT_RUN = Pattern.compile("^\\s*<!--\\s*not run\\b:?(.*?)-->\\s*$");

  /** Whether the docs tests run it (no {@code not run} marker). */
  public boolean runs() {
    return notRun == null;
  }

  /** The page line of the block's i-th line (0-based). */
  public int lineOf(int i) {
    return fenceLine + 1 + i;
  }

  /** The line after the block's last line: its closing fence. */
  public int closingLine() {
    return fenceLine + lines.size() + 1;
  }

  public boolean contains(int pageLine) {
    return pageLine > fenceLine && pageLine < closingLine();
  }

  /** Where it is, for messages: {@code docs/x.md:42}. */
  public String where() {
    return page + ":" + fenceLine;
  }

  public static List<ShellBlock> read(Path root, String page) throws IOException {
    return parse(page, Files.readAllLines(root.resolve(page)));
  }

  /**
   * The page's shell blocks, in order; an unclosed block runs to the end of the page, as Markdown
   * renders it.
   */
  public static List<ShellBlock> parse(String page, List<String> pageLines) {
    List<ShellBlock> blocks = new ArrayList<>();
    String lastText = "";
    for (int i = 0; i < pageLines.size(); i++) {
      Matcher open = OPENING.matcher(pageLines.get(i));
      if (!open.matches()) {
        if (!pageLines.get(i).isBlank()) {
          lastText = pageLines.get(i);
        }
        continue;
      }
      int indent = open.group(1).length();
      String fence = open.group(2);
      String lang = open.group(3).toLowerCase(Locale.ROOT);
      List<String> content = new ArrayList<>();
      int j = i + 1;
      while (j < pageLines.size() && !closes(pageLines.get(j), fence)) {
        String line = pageLines.get(j);
        content.add(line.substring(Math.min(indent, leadingSpaces(line))));
        j++;
      }
      if (lang.equals("sh") || lang.equals("bash")) {
        Matcher marker = NOT_RUN.matcher(lastText);
        blocks.add(
            new ShellBlock(
                page,
                i + 1,
                List.copyOf(content),
                marker.matches() ? marker.group(1).strip() : null));
      }
      lastText = "";
      i = j;
    }
    return blocks;
  }

  /** Whether a line is a not-run marker (with or without a reason): for checking each says why. */
  public static boolean isMarker(String line) {
    return NOT_RUN.matcher(line).matches();
  }

  private static boolean closes(String line, String fence) {
    String s = line.strip();
    return s.length() >= fence.length() && s.chars().allMatch(c -> c == fence.charAt(0));
  }

  private static int leadingSpaces(String line) {
    int n = 0;
    while (n < line.length() && line.charAt(n) == ' ') {
      n++;
    }
    return n;
  }
}
