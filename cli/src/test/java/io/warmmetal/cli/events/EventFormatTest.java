package io.warmmetal.cli.events;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.warmmetal.cli.output.OutputFormat;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;

class EventFormatTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void columnsStayAlignedWhateverTheFractionOfASecond() {
    ArrayNode events = JSON.createArrayNode();
    for (String at :
        List.of(
            "2026-12-02T10:41:46.604132Z", "2026-12-02T10:41:46.60576Z", "2026-12-02T10:41:47Z")) {
      events
          .addObject()
          .put("at", at)
          .put("type", "InstanceState")
          .put("subject", "i-1")
          .put("reason", "joined");
    }
    StringWriter out = new StringWriter();
    EventFormat.print(new PrintWriter(out), OutputFormat.TABLE, events, true);

    List<String> lines = out.toString().lines().toList();
    assertThat(lines).hasSize(4);
    assertThat(lines.get(2)).startsWith("2026-12-02T10:41:46.605760Z  InstanceState");
    assertThat(lines.get(3)).startsWith("2026-12-02T10:41:47.000000Z  InstanceState");
    int typeColumn = lines.get(0).indexOf("TYPE");
    assertThat(lines.subList(1, 4))
        .allSatisfy(l -> assertThat(l.indexOf("InstanceState")).isEqualTo(typeColumn));
  }

  @Test
  void aTimeThatIsNotAnInstantIsPrintedAsItCame() {
    assertThat(EventFormat.line(JSON.createObjectNode().put("at", "yesterday").put("type", "X")))
        .startsWith("yesterday ");
  }
}
