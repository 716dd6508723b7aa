package io.warmmetal.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.cli.testing.CliFixture;
import io.warmmetal.protocol.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code events --follow}: new events appear as they are recorded, each once; an interrupt ends it
 * cleanly.
 */
class EventsFollowTest {
  @RegisterExtension static final CliFixture fx = new CliFixture();

  @Test
  void followPrintsNewEventsUntilStopped() throws InterruptedException {
    String before = fx.api.registerMachines(1, ApiFixture.facts(8, 32), true).get(0);
    var run = fx.background("events", "--follow", "--interval", "0.1");
    Await.until("the events so far", () -> run.out().contains(before));

    String after = fx.api.registerMachines(1, ApiFixture.facts(8, 32), true).get(0);
    fx.run("machines", "cordon", after);
    fx.run("machines", "retire", after);
    Await.until("the new machine's retirement", () -> run.out().contains("retired"));

    assertThat(run.stop()).isZero();
    String out = run.out();
    assertThat(out).startsWith("TIME").contains(after);
    assertThat(out.split("\n")[0]).contains("TYPE", "SUBJECT", "FROM", "TO", "REASON");
    // The header once, and no event twice.
    assertThat(out.lines().filter(l -> l.startsWith("TIME"))).hasSize(1);
    assertThat(out.lines().filter(l -> l.contains(before)).count())
        .isEqualTo(fx.run("events", "--machine", before).out().lines().count() - 1);
  }

  @Test
  void jsonEventsAreOneObjectPerLine() throws Exception {
    String machine = fx.api.registerMachines(1, ApiFixture.facts(4, 8), true).get(0);
    var run = fx.run("events", "--machine", machine, "-o", "json");
    assertThat(run.code()).isZero();
    for (String line : run.out().split("\n")) {
      assertThat(new ObjectMapper().readTree(line).path("machineId").asText()).isEqualTo(machine);
    }
  }
}
