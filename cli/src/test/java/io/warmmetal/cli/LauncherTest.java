package io.warmmetal.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.cli.testing.CliFixture;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code bin/warmmetal} as a user runs it: a separate JVM from the packaged jar (the processes tier
 * runs after the package phase), against the real API.
 */
@Tag("processes")
class LauncherTest {
  private static final Path LAUNCHER = Path.of("bin/warmmetal").toAbsolutePath();
  @RegisterExtension static final CliFixture fx = new CliFixture();

  @BeforeAll
  static void machines() {
    fx.api.registerMachines(2, ApiFixture.facts(8, 32), true);
  }

  private record Result(int code, String out, String err) {}

  private static Result launch(String... args) throws Exception {
    var command = new ArrayList<String>();
    command.add(LAUNCHER.toString());
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.environment().put("WARMMETAL_API", fx.url());
    pb.environment().put("WARMMETAL_TOKEN", ApiFixture.ADMIN);
    pb.environment().put("WARMMETAL_CONFIG", fx.home.resolve("launcher.yaml").toString());
    Process p = pb.start();
    p.getOutputStream().close();
    var out = p.getInputStream().readAllBytes();
    var err = p.getErrorStream().readAllBytes();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    return new Result(
        p.exitValue(),
        new String(out, StandardCharsets.UTF_8),
        new String(err, StandardCharsets.UTF_8));
  }

  @Test
  void theLauncherRunsTheJarAgainstTheApi() throws Exception {
    Result shapes = launch("shapes", "ls", "-o", "json");
    assertThat(shapes.code()).as(shapes.err()).isZero();
    assertThat(new ObjectMapper().readTree(shapes.out()).get(0).path("total").asInt()).isEqualTo(2);

    Result launched = launch("instances", "launch", "--shape", "x86-8c-32g");
    assertThat(launched.code()).as(launched.err()).isZero();
    assertThat(launched.out()).containsPattern("i-[0-9a-f]{17}\\s+pending");
  }

  @Test
  void exitCodesReachTheShell() throws Exception {
    assertThat(launch("no-such-command").code()).isEqualTo(2);
    assertThat(launch("instances", "get", "i-0123456789abcdef0").code()).isEqualTo(1);
    assertThat(launch("--api", "http://127.0.0.1:1", "shapes", "ls").code()).isEqualTo(3);
  }
}
