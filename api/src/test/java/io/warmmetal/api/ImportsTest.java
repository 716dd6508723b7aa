package io.warmmetal.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Code names a type by its simple name and imports it: no {@code java.util.function.Supplier<...>}
 * written inline in any module's main or test code (docs/contributing.md). A qualified name stays
 * only where the simple one is taken in that file — another type of that name is imported, declared
 * in the file or lives in the file's own package — which is the one place Java needs it. Comments,
 * string literals, and import and package lines are not code here.
 */
class ImportsTest {
  private static final Path ROOT = Path.of("..");

  /**
   * A package name, then a type's: split across lines too, as a long qualified name may be wrapped.
   */
  private static final Pattern QUALIFIED =
      Pattern.compile(
          "(?<![\\w.])((?:java|javax|io|org|com)(?:\\s*\\.\\s*[a-z0-9_]+)+)\\s*\\.\\s*([A-Z]\\w*)");

  private static final Pattern SPACE = Pattern.compile("\\s+");
  private static final Pattern PACKAGE = Pattern.compile("(?m)^\\s*package\\s+([\\w.]+)\\s*;");
  private static final Pattern IMPORT =
      Pattern.compile("(?m)^\\s*import\\s+(?:static\\s+)?([\\w.]+)\\.(\\w+)\\s*;");
  private static final Pattern DECLARED =
      Pattern.compile("\\b(?:class|interface|enum|record)\\s+([A-Z]\\w*)");

  @Test
  void codeImportsTheTypesItNames() throws IOException {
    List<String> found = new ArrayList<>();
    try (Stream<Path> modules = Files.list(ROOT)) {
      for (Path module : modules.sorted().toList()) {
        for (String tree : List.of("src/main/java", "src/test/java")) {
          Path sources = module.resolve(tree);
          if (Files.isDirectory(sources)) {
            found.addAll(scan(module, sources));
          }
        }
      }
    }
    assertThat(found)
        .as(
            "inline qualified type names: import the type instead (a true clash of simple names is "
                + "allowed by itself)")
        .isEmpty();
  }

  @Test
  void theScanSeesCodeOnlyAndAllowsClashes() {
    String source =
        """
        package io.warmmetal.example;

        import io.vertx.core.Future;
        import java.util.List;

        /** See {@link java.util.Map.Entry}; {@code java.util.Set} too. */
        class Example {
          List<java.util.function.Supplier<String>> suppliers; // a java.util.Optional in a comment
          java.util.concurrent.Future<Void> clash = io.vertx.sqlclient.Tuple.of(1);
          String text = "java.util.Objects", block = \"""
              io.warmmetal.api.Main.main(args) \\\""" still in the block
              \""";
          char c = '"'; Object after = org.slf4j.LoggerFactory.getLogger(Example.class);
          io.warmmetal.example.Sibling sibling; io.warmmetal.other.Sibling other; io.warmmetal.example.Example self;
          Object wrapped = new java.util.concurrent
              .atomic.AtomicReference<>();
        }
        """;
    assertThat(findings("Example.java", source, Set.of("Sibling", "Example")))
        .containsExactly(
            "Example.java:8: java.util.function.Supplier",
            "Example.java:9: io.vertx.sqlclient.Tuple",
            "Example.java:13: org.slf4j.LoggerFactory",
            "Example.java:14: io.warmmetal.example.Sibling",
            "Example.java:14: io.warmmetal.example.Example",
            "Example.java:15: java.util.concurrent.atomic.AtomicReference");
  }

  private static List<String> scan(Path module, Path sources) throws IOException {
    List<String> found = new ArrayList<>();
    try (Stream<Path> files = Files.walk(sources)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".java")).sorted().toList()) {
        found.addAll(
            findings(
                ROOT.relativize(file).toString(),
                Files.readString(file),
                samePackage(module, sources, file)));
      }
    }
    return found;
  }

  /**
   * The simple names of the types in a file's package, in the module's main and test trees both.
   */
  private static Set<String> samePackage(Path module, Path sources, Path file) {
    Path dir = sources.relativize(file.getParent());
    Set<String> names = new HashSet<>();
    for (String tree : List.of("src/main/java", "src/test/java")) {
      Path siblings = module.resolve(tree).resolve(dir);
      if (Files.isDirectory(siblings)) {
        try (Stream<Path> files = Files.list(siblings)) {
          files
              .map(f -> f.getFileName().toString())
              .filter(n -> n.endsWith(".java"))
              .forEach(n -> names.add(n.substring(0, n.length() - ".java".length())));
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    }
    return names;
  }

  /**
   * {@code file:line: qualified name} for each inline qualified type name whose simple name is free
   * in the file.
   */
  static List<String> findings(String file, String source, Set<String> samePackage) {
    String code = code(source);
    Matcher pkg = PACKAGE.matcher(code);
    String ownPackage = pkg.find() ? pkg.group(1) : "";
    Set<String> imported = new HashSet<>();
    Set<String> importedNames = new HashSet<>();
    for (Matcher m = IMPORT.matcher(code); m.find(); ) {
      imported.add(m.group(1) + "." + m.group(2));
      importedNames.add(m.group(2));
    }
    Set<String> declared = new HashSet<>();
    for (Matcher m = DECLARED.matcher(code); m.find(); ) {
      declared.add(m.group(1));
    }
    StringBuilder body = new StringBuilder();
    for (String line : code.split("\n", -1)) {
      String trimmed = line.strip();
      boolean header = trimmed.startsWith("import ") || trimmed.startsWith("package ");
      body.append(header ? "" : line).append('\n');
    }
    List<String> found = new ArrayList<>();
    for (Matcher m = QUALIFIED.matcher(body); m.find(); ) {
      String pkgName = SPACE.matcher(m.group(1)).replaceAll("");
      String name = m.group(2);
      String qualified = pkgName + "." + name;
      boolean elsewhere = !pkgName.equals(ownPackage);
      boolean clash =
          importedNames.contains(name) && !imported.contains(qualified)
              || elsewhere && (declared.contains(name) || samePackage.contains(name));
      if (!clash) {
        long line = body.chars().limit(m.start()).filter(c -> c == '\n').count() + 1;
        found.add(file + ":" + line + ": " + qualified);
      }
    }
    return found;
  }

  /**
   * The source with its comments and its string, text block and character literals blanked; lines
   * stay put.
   */
  static String code(String source) {
    StringBuilder out = new StringBuilder(source.length());
    int i = 0;
    while (i < source.length()) {
      int end;
      if (source.startsWith("//", i)) {
        end = source.indexOf('\n', i);
        end = end < 0 ? source.length() : end;
      } else if (source.startsWith("/*", i)) {
        end = source.indexOf("*/", i + 2);
        end = end < 0 ? source.length() : end + 2;
      } else if (source.startsWith("\"\"\"", i)) {
        end = literalEnd(source, i + 3, "\"\"\"");
      } else if (source.charAt(i) == '"' || source.charAt(i) == '\'') {
        end = literalEnd(source, i + 1, String.valueOf(source.charAt(i)));
      } else {
        out.append(source.charAt(i++));
        continue;
      }
      for (int j = i; j < end; j++) {
        out.append(source.charAt(j) == '\n' ? '\n' : ' ');
      }
      i = end;
    }
    return out.toString();
  }

  private static int literalEnd(String source, int from, String quote) {
    for (int j = from; j < source.length(); j++) {
      if (source.charAt(j) == '\\') {
        j++;
      } else if (source.startsWith(quote, j)) {
        return j + quote.length();
      }
    }
    return source.length();
  }
}
