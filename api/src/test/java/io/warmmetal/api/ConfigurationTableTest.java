package io.warmmetal.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.warmmetal.api.config.ApiConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The configuration table in {@code docs/configuration.md} is the API's settings, no more and no
 * fewer: every {@code WARMMETAL_*} variable the code reads has a row, every row a variable the code
 * reads, and every flag a row names is one the server takes (and the other way round).
 */
class ConfigurationTableTest {
  private static final Path PAGE = Path.of("..", "docs", "configuration.md");
  private static final Pattern VARIABLE = Pattern.compile("`(WARMMETAL_[A-Z0-9_]+)`");
  private static final Pattern FLAG = Pattern.compile("`(--[a-z-]+)`");

  @Test
  void theTableNamesEveryVariableTheApiReadsAndNoOther() throws IOException {
    Set<String> read = new TreeSet<>(ApiConfig.variables());
    read.addAll(Main.LOGGING_VARIABLES);
    Set<String> table = new TreeSet<>();
    for (String row : rows()) {
      table.addAll(matches(VARIABLE, cell(row, 1)));
    }
    assertThat(read).as("variables the code reads").hasSizeGreaterThan(40);
    assertThat(read).as("variables the code reads that the table lacks").isSubsetOf(table);
    assertThat(table).as("variables in the table the code does not read").isSubsetOf(read);
  }

  @Test
  void theTableNamesEveryFlagTheServerTakesAndNoOther() throws IOException {
    Set<String> taken = new TreeSet<>();
    for (OptionSpec option : new CommandLine(new Main()).getCommandSpec().options()) {
      if (!option.usageHelp() && !option.versionHelp()) {
        taken.add(option.longestName());
      }
    }
    Set<String> table = new TreeSet<>();
    for (String row : rows()) {
      table.addAll(matches(FLAG, cell(row, 2)));
    }
    assertThat(taken).isNotEmpty();
    assertThat(table).isEqualTo(taken);
  }

  /** The table's rows, header and rule left out. */
  private static List<String> rows() throws IOException {
    List<String> rows =
        Files.readAllLines(PAGE).stream()
            .dropWhile(l -> !l.startsWith("| variable | flag | default | meaning |"))
            .takeWhile(l -> l.startsWith("|"))
            .skip(2)
            .toList();
    assertThat(rows).as("the configuration table in " + PAGE).isNotEmpty();
    return rows;
  }

  private static String cell(String row, int column) {
    // cells are split on | not escaped as \| (a default may hold one)
    return row.split("(?<!\\\\)\\|")[column];
  }

  private static Set<String> matches(Pattern pattern, String text) {
    return pattern
        .matcher(text)
        .results()
        .map(m -> m.group(1))
        .collect(Collectors.toCollection(TreeSet::new));
  }
}
