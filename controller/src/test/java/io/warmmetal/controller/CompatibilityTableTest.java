package io.warmmetal.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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

  /** The word each row's WarmMetal cell starts with, as the summary above the table counts them. */
  private static final List<String> STATUSES =
      List.of("Same", "Partly", "Missing", "Does not apply", "WarmMetal addition");

  @Test
  void theCountAboveTheTableIsTheRowsCounted() throws IOException {
    String page = Files.readString(ROOT.resolve("docs/controller.md"));
    String section = page.substring(page.indexOf("## Karpenter compatibility"));
    Map<String, Integer> counted = new LinkedHashMap<>();
    STATUSES.forEach(s -> counted.put(s, 0));
    List<String> unmarked = new ArrayList<>();
    section
        .lines()
        .dropWhile(l -> !l.startsWith("| Feature"))
        .takeWhile(l -> l.startsWith("|"))
        .skip(2)
        .forEach(
            row -> {
              String warmMetal = row.split(" \\| ")[2];
              STATUSES.stream()
                  .filter(warmMetal::startsWith)
                  .findFirst()
                  .ifPresentOrElse(s -> counted.merge(s, 1, Integer::sum), () -> unmarked.add(row));
            });
    assertThat(unmarked).as("rows whose WarmMetal cell says no status").isEmpty();
    int upstream =
        counted.values().stream().mapToInt(Integer::intValue).sum()
            - counted.get("WarmMetal addition");
    String summary =
        String.format(
            "**Of upstream's %d features below, %d work as upstream's, %d partly, %d %s missing and"
                + " %d do not apply to owned servers; %d rows are WarmMetal additions.**",
            upstream,
            counted.get("Same"),
            counted.get("Partly"),
            counted.get("Missing"),
            counted.get("Missing") == 1 ? "is" : "are",
            counted.get("Does not apply"),
            counted.get("WarmMetal addition"));
    assertThat(section.replaceAll("\\s*\\n\\s*", " ")).contains(summary);
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
