package io.warmmetal.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The Karpenter compatibility table ({@code docs/controller.md}) stays true to the tests: every
 * test it names exists (the class, and the method where it names one), so a row cannot claim what
 * nothing checks.
 */
class CompatibilityTableTest {
  private static final Path ROOT = Path.of("..");

  @Test
  void everyTestTheTableNamesExists() throws IOException {
    String page = Files.readString(ROOT.resolve("docs/controller.md"));
    int start = page.indexOf("## Karpenter compatibility");
    assertThat(start).as("docs/controller.md has the table").isNotNegative();
    List<String> rows =
        page.substring(start)
            .lines()
            .dropWhile(l -> !l.startsWith("| Feature"))
            .takeWhile(l -> l.startsWith("|"))
            .skip(2)
            .toList();
    assertThat(rows).hasSizeGreaterThan(15);
    List<String> missing = new ArrayList<>();
    int named = 0;
    for (String row : rows) {
      String[] cells = row.split("\\|");
      String tests = cells[cells.length - 1];
      Matcher m = Pattern.compile("`([A-Z][A-Za-z]+Test)(#([A-Za-z]+))?`").matcher(tests);
      while (m.find()) {
        named++;
        Optional<Path> file = find(m.group(1));
        if (file.isEmpty()) {
          missing.add(m.group(0) + " (no such test class)");
        } else if (m.group(3) != null
            && !Files.readString(file.get()).contains("void " + m.group(3) + "(")) {
          missing.add(m.group(0) + " (no such test method)");
        }
      }
    }
    assertThat(named).isGreaterThan(30);
    assertThat(missing).isEmpty();
  }

  private static Optional<Path> find(String testClass) throws IOException {
    for (String module : List.of("controller", "e2e", "api", "agent")) {
      Path tests = ROOT.resolve(module).resolve("src/test/java");
      if (!Files.isDirectory(tests)) {
        continue;
      }
      try (Stream<Path> files = Files.walk(tests)) {
        Optional<Path> found =
            files.filter(p -> p.getFileName().toString().equals(testClass + ".java")).findFirst();
        if (found.isPresent()) {
          return found;
        }
      }
    }
    return Optional.empty();
  }
}
