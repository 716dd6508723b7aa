package io.warmmetal.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine.Option;

/**
 * The controller's settings table ({@code docs/controller.md#settings}) is its flags: each flag's
 * row names it, the environment variable it reads and its default — no flag missing, no row for a
 * flag that does not exist.
 */
class ControllerSettingsTableTest {
  private static final Pattern DEFAULT = Pattern.compile("\\$\\{env:([A-Z0-9_]+):-(.*)}");

  @Test
  void theTableListsEveryFlagWithItsVariableAndDefault() throws IOException {
    Map<String, String> fromCode = new LinkedHashMap<>();
    for (var field : Main.class.getDeclaredFields()) {
      Option option = field.getAnnotation(Option.class);
      if (option == null) {
        continue;
      }
      Matcher m = DEFAULT.matcher(option.defaultValue());
      assertThat(m.matches())
          .as("%s reads a WARMMETAL_CONTROLLER_ variable with a default", option.names()[0])
          .isTrue();
      fromCode.put(option.names()[0], "`" + m.group(1) + "` | `" + m.group(2) + "`");
    }
    assertThat(fromCode).hasSizeGreaterThan(5);

    String page = Files.readString(Path.of("../docs/controller.md"));
    String section = page.substring(page.indexOf("## Settings"));
    Map<String, String> fromTable = new LinkedHashMap<>();
    section
        .lines()
        .dropWhile(l -> !l.startsWith("| flag"))
        .takeWhile(l -> l.startsWith("|"))
        .skip(2)
        .forEach(
            row -> {
              String[] cells =
                  Arrays.stream(row.split("\\|")).map(String::strip).toArray(String[]::new);
              fromTable.put(cells[1].replace("`", ""), cells[2] + " | " + cells[3]);
            });
    assertThat(fromTable).isEqualTo(fromCode);
  }
}
