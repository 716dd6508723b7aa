package io.warmmetal.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.cli.testing.CliFixture;
import io.warmmetal.protocol.testing.Await;
import java.util.Arrays;
import java.util.regex.Pattern;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Shapes and pools through the CLI, in each output format. Each test has machines of a shape of its
 * own.
 */
class ShapesAndPoolsTest {
  @RegisterExtension static final CliFixture fx = new CliFixture();

  @Test
  void shapesAreATableWithUpperCaseHeadersAndAlignedColumns() {
    fx.api.registerMachines(3, ApiFixture.facts(8, 32), true);
    var run = fx.run("shapes", "ls");
    assertThat(run.code()).as(run.toString()).isZero();
    String[] lines = run.out().split("\n");
    assertThat(lines[0])
        .startsWith("NAME")
        .contains("ARCH", "CPUS", "WARM", "TOTAL")
        .doesNotContain("COUNTS");
    String row =
        Arrays.stream(lines).filter(l -> l.startsWith("x86-8c-32g ")).findFirst().orElseThrow();
    // Aligned: each header starts where its cells start.
    assertThat(row.indexOf("3", lines[0].indexOf("WARM"))).isEqualTo(lines[0].indexOf("WARM"));
    assertThat(row.substring(lines[0].indexOf("CPUS"))).startsWith("8 ");

    var wide = fx.run("shapes", "get", "x86-8c-32g", "-o", "wide");
    assertThat(wide.code()).as(wide.toString()).isZero();
    assertThat(wide.out()).contains("COUNTS", "warm=3");
  }

  @Test
  void poolsSetThenGet() throws Exception {
    fx.api.registerMachines(3, ApiFixture.facts(16, 64), true);
    var set = fx.run("pools", "set", "x86-16c-64g", "--min-warm", "1", "--max-warm", "2");
    assertThat(set.code()).as(set.toString()).isZero();
    assertThat(set.out()).startsWith("SHAPE").contains("MIN-WARM");

    var get = fx.run("pools", "get", "x86-16c-64g", "-o", "json");
    assertThat(get.code()).as(get.toString()).isZero();
    JsonNode pool = new ObjectMapper().readTree(get.out());
    assertThat(pool.path("minWarm").asInt()).isEqualTo(1);
    assertThat(pool.path("maxWarm").asInt()).isEqualTo(2);

    // Above maxWarm, the pool parks the third machine in standby (its next pass, just after).
    Pattern parked = Pattern.compile("(?m)^x86-16c-64g\\s+1\\s+2\\s+2\\s+0\\s+1\\s+0\\s+0\\s+0$");
    String[] last = new String[1];
    Await.until(
        "the third machine parked in standby",
        () -> parked.matcher(last[0] = fx.run("pools", "get").out()).find(),
        30_000,
        () -> last[0]);
  }

  @Test
  void listsAsJsonAndYaml() throws Exception {
    fx.api.registerMachines(3, ApiFixture.facts(2, 4), true);
    JsonNode json = new ObjectMapper().readTree(fx.run("shapes", "ls", "-o", "json").out());
    assertThat(json.isArray()).isTrue();
    JsonNode shape =
        StreamSupport.stream(json.spliterator(), false)
            .filter(s -> s.path("name").asText().equals("x86-2c-4g"))
            .findFirst()
            .orElseThrow();
    assertThat(shape.path("counts").path("warm").asInt()).isEqualTo(3);

    var yamlRun = fx.run("-o", "yaml", "machines", "ls", "--shape", "x86-2c-4g");
    assertThat(yamlRun.code()).as(yamlRun.toString()).isZero();
    JsonNode yaml = new ObjectMapper(new YAMLFactory()).readTree(yamlRun.out());
    assertThat(yaml).hasSize(3);
    assertThat(yaml.get(0).path("state").asText()).isEqualTo("warm");
  }

  @Test
  void machinesCordonAndUncordon() {
    String id = fx.api.registerMachines(1, ApiFixture.facts(4, 8), true).get(0);
    var cordon = fx.run("machines", "cordon", id);
    assertThat(cordon.code()).as(cordon.toString()).isZero();
    assertThat(cordon.out().split("\n")[1])
        .matches(id + "\\s+\\S+\\s+warm\\s+x86-4c-8g\\s+true\\s+.*");
    assertThat(fx.run("machines", "ls", "--cordoned").out()).contains(id);
    assertThat(fx.run("machines", "uncordon", id).out().split("\n")[1]).contains(" false ");
    var power = fx.run("machines", "power", id);
    assertThat(power.out()).startsWith("MACHINE").contains(id, "none");
  }
}
