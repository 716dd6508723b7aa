package io.warmmetal.api.ec2;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** docs/ec2.md's table of actions names exactly the actions the endpoint answers, in its order. */
class Ec2ActionsTableTest {
  private static final Path PAGE = Path.of("..", "docs", "ec2.md");
  private static final Pattern ACTION = Pattern.compile("`([A-Z][A-Za-z]+)`");

  @Test
  void theManualsTableListsEveryActionAnswered() throws Exception {
    List<String> documented = new ArrayList<>();
    boolean inTable = false;
    for (String line : Files.readAllLines(PAGE)) {
      if (line.startsWith("## ")) {
        inTable = line.equals("## Actions");
      } else if (inTable && line.startsWith("| `")) {
        Matcher names = ACTION.matcher(line.substring(0, line.indexOf('|', 1)));
        while (names.find()) {
          documented.add(names.group(1));
        }
      }
    }
    assertThat(documented).isEqualTo(new Ec2Endpoint(null, null, null).actions());
  }
}
