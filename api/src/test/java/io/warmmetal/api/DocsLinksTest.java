package io.warmmetal.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The README is the front door and {@code docs/} the manual: every relative link in them (and in
 * the module READMEs) reaches a file of the repository, every {@code #anchor} a heading of its
 * target as GitHub names it, and nothing points outside the repository — so a page moved or a
 * heading renamed fails here, not in a reader's browser.
 */
class DocsLinksTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final Pattern LINK =
      Pattern.compile("(?<!!)\\[([^\\]]*)\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
  private static final Pattern CODE_SPAN = Pattern.compile("`[^`]*`");
  private static final Pattern HEADING = Pattern.compile("^ {0,3}(#{1,6})\\s+(.*?)\\s*#*\\s*$");
  private static final Pattern UP_PATH = Pattern.compile("(?<![\\w.])((?:\\.\\./)+[\\w./-]*)");
  private static final Pattern PAGE_NAMED = Pattern.compile("`([\\w][\\w./-]*\\.md)`");

  @Test
  void everyRelativeLinkReachesAFileAndEveryAnchorAHeading() throws IOException {
    List<String> broken = new ArrayList<>();
    Map<Path, Set<String>> anchors = new HashMap<>();
    int checked = 0;
    for (Path page : pages()) {
      for (String target : links(page)) {
        if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
          continue; // https:, mailto: — not ours to check offline
        }
        checked++;
        int hash = target.indexOf('#');
        String file = hash < 0 ? target : target.substring(0, hash);
        String anchor = hash < 0 ? null : target.substring(hash + 1);
        Path resolved = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
        String where = ROOT.relativize(page) + ": " + target;
        if (!resolved.startsWith(ROOT)) {
          broken.add(where + " (outside the repository)");
        } else if (!Files.exists(resolved)) {
          broken.add(where + " (no such file)");
        } else if (anchor != null) {
          Set<String> headings = anchors.computeIfAbsent(resolved, DocsLinksTest::headingSlugs);
          if (!headings.contains(anchor)) {
            broken.add(where + " (no such heading in " + ROOT.relativize(resolved) + ")");
          }
        }
      }
    }
    assertThat(checked).as("relative links checked").isGreaterThan(50);
    assertThat(broken).as("broken links").isEmpty();
  }

  @Test
  void everyPageAPageNamesIsInTheRepository() throws IOException {
    List<String> missing = new ArrayList<>();
    for (Path page : pages()) {
      for (String line : prose(Files.readAllLines(page))) {
        Matcher m = PAGE_NAMED.matcher(line);
        while (m.find()) {
          if (!Files.exists(ROOT.resolve(m.group(1)))
              && !Files.exists(page.getParent().resolve(m.group(1)))) {
            missing.add(ROOT.relativize(page) + ": `" + m.group(1) + "`");
          }
        }
      }
    }
    assertThat(missing).isEmpty();
  }

  private static final Set<String> TEMPORARY = Set.of("/tmp", "/var/tmp");

  @Test
  void noPageRefersOutsideTheRepository() throws IOException {
    // The checkout's siblings (a workspace's shared notes, say) are where pages must not point.
    // Where the checkout
    // sits in a temporary directory (a CI clone), /tmp/… in a page is a path the product uses, not
    // a sibling.
    Path parentDir = ROOT.getParent();
    boolean systemParent =
        parentDir.getParent() == null
            || TEMPORARY.contains(parentDir.toString())
            || parentDir.equals(
                Path.of(System.getProperty("java.io.tmpdir")).toAbsolutePath().normalize());
    String parent = systemParent ? ROOT + "/" : parentDir + "/";
    List<String> outside = new ArrayList<>();
    for (Path page : pages()) {
      List<String> lines = Files.readAllLines(page);
      for (int i = 0; i < lines.size(); i++) {
        String line = lines.get(i);
        String where = ROOT.relativize(page) + ":" + (i + 1) + ": ";
        if (line.contains(parent)) {
          outside.add(where + "an absolute path outside the repository (" + parent + "…)");
        }
        Matcher up = UP_PATH.matcher(line);
        while (up.find()) {
          Path resolved = page.getParent().resolve(up.group(1)).normalize();
          if (!resolved.startsWith(ROOT) || !Files.exists(resolved)) {
            outside.add(where + up.group(1) + " (not a path in the repository)");
          }
        }
      }
    }
    assertThat(outside).isEmpty();
  }

  @Test
  void theReadmeLinksEveryPageOfTheManual() throws IOException {
    Set<Path> linked = new HashSet<>();
    Path readme = ROOT.resolve("README.md");
    for (String target : links(readme)) {
      linked.add(ROOT.resolve(target.replaceFirst("#.*", "")).normalize());
    }
    List<Path> manual;
    try (Stream<Path> files = Files.list(ROOT.resolve("docs"))) {
      manual = files.filter(p -> p.toString().endsWith(".md")).sorted().toList();
    }
    assertThat(manual).hasSizeGreaterThan(10);
    assertThat(manual).as("docs pages the README's table does not link").allMatch(linked::contains);
  }

  @Test
  void headingsAreSluggedAsGitHubDoes() {
    assertThat(slug("Pending pod → Node Ready")).isEqualTo("pending-pod--node-ready");
    assertThat(slug("The API server (`api/src/main/java/io/warmmetal/api`)"))
        .isEqualTo("the-api-server-apisrcmainjavaiowarmmetalapi");
    assertThat(slug("10,000 agents")).isEqualTo("10000-agents");
    assertThat(slug("Roles × permissions × projects")).isEqualTo("roles--permissions--projects");
    assertThat(slug("A real node: what a server needs, and what the join does"))
        .isEqualTo("a-real-node-what-a-server-needs-and-what-the-join-does");
  }

  /**
   * The README, the manual and every design note (README.md) in the repository, build output left
   * out.
   */
  private static List<Path> pages() throws IOException {
    List<Path> pages = new ArrayList<>();
    pages.add(ROOT.resolve("README.md"));
    try (Stream<Path> files = Files.list(ROOT.resolve("docs"))) {
      files.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
    }
    try (Stream<Path> files = Files.walk(ROOT)) {
      files
          .filter(
              p -> p.getFileName().toString().equals("README.md") && !p.getParent().equals(ROOT))
          .filter(p -> ROOT.relativize(p).toString().split("/").length <= 4)
          .filter(
              p ->
                  Stream.of("target", "node_modules", ".git")
                      .noneMatch(
                          d ->
                              ROOT.relativize(p).startsWith(d)
                                  || ROOT.relativize(p).toString().contains("/" + d + "/")))
          .sorted()
          .forEach(pages::add);
    }
    assertThat(pages).hasSizeGreaterThan(15);
    return pages;
  }

  /**
   * The link targets of a page's prose: fenced code blocks and code spans hold commands, not links.
   */
  private static List<String> links(Path page) throws IOException {
    List<String> targets = new ArrayList<>();
    for (String line : prose(Files.readAllLines(page))) {
      Matcher m = LINK.matcher(CODE_SPAN.matcher(line).replaceAll("``"));
      while (m.find()) {
        targets.add(m.group(2).replaceFirst("^<(.*)>$", "$1"));
      }
    }
    return targets;
  }

  private static List<String> prose(List<String> lines) {
    List<String> prose = new ArrayList<>();
    String fence = null;
    for (String line : lines) {
      String trimmed = line.stripLeading();
      if (fence == null && (trimmed.startsWith("```") || trimmed.startsWith("~~~"))) {
        fence = trimmed.substring(0, 3);
      } else if (fence != null && trimmed.startsWith(fence)) {
        fence = null;
      } else if (fence == null) {
        prose.add(line);
      }
    }
    return prose;
  }

  /**
   * The anchors GitHub gives a page's headings: each slug, a repeated one with -1, -2, … after it.
   */
  private static Set<String> headingSlugs(Path file) {
    Set<String> slugs = new HashSet<>();
    if (!file.toString().endsWith(".md")) {
      return slugs;
    }
    Map<String, Integer> seen = new HashMap<>();
    try {
      for (String line : prose(Files.readAllLines(file))) {
        Matcher m = HEADING.matcher(line);
        if (m.matches()) {
          String slug = slug(m.group(2));
          int n = seen.merge(slug, 1, Integer::sum) - 1;
          slugs.add(n == 0 ? slug : slug + "-" + n);
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    return slugs;
  }

  /**
   * github-slugger: lower case, links reduced to their text, every character but letters, digits, -
   * and _ gone, spaces made hyphens (so "a → b" is "a--b").
   */
  static String slug(String heading) {
    String text =
        heading
            .replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1")
            .replaceAll("<[^>]+>", "")
            .toLowerCase();
    StringBuilder slug = new StringBuilder();
    text.codePoints()
        .forEach(
            c -> {
              if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
                slug.appendCodePoint(c);
              } else if (c == ' ') {
                slug.append('-');
              }
            });
    return slug.toString();
  }
}
