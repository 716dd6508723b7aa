package io.warmmetal.agent.commands;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Real scripts, run as real processes. */
class ScriptExecutorTest {
  private Vertx vertx;
  private Path scripts;
  private final List<String> steps = new CopyOnWriteArrayList<>();

  @BeforeEach
  void setUp() throws Exception {
    vertx = Vertx.vertx();
    scripts = Files.createTempDirectory("scripts");
  }

  @AfterEach
  void tearDown() {
    vertx.close().await();
  }

  private Outcome run(String kind, String script, JsonObject params, Duration timeout) throws Exception {
    Files.writeString(scripts.resolve(kind + ".sh"), script);
    return new ScriptExecutor(vertx, scripts, timeout)
        .run(new Command("cmd-1", 1, kind, "i-1", params), (step, message) -> steps.add(step)).await();
  }

  @Test
  void stepsAreReportedAndSecretsArriveOnStandardInputOnly() throws Exception {
    Path seen = scripts.resolve("seen");
    String script = """
        set -eu
        echo "::step kubeadm-join"
        cat > %s
        env > %s.env
        echo "::step done"
        """.formatted(seen, seen);
    JsonObject params = new JsonObject().put("kubernetes", new JsonObject().put("bootstrapToken", "abcdef.secret"));
    Outcome outcome = run("join", script, params, Duration.ofSeconds(30));
    assertThat(outcome.succeeded()).as(outcome.message()).isTrue();
    assertThat(steps).containsExactly("kubeadm-join", "done");
    assertThat(Files.readString(seen)).contains("abcdef.secret");
    assertThat(Files.readString(Path.of(seen + ".env"))).contains("WARMMETAL_COMMAND_ID=cmd-1")
        .doesNotContain("abcdef.secret");
  }

  @Test
  void aFailingScriptFailsWithItsLastWords() throws Exception {
    Outcome outcome = run("prepare", "echo 'containerd is not installed'; exit 3", new JsonObject(),
        Duration.ofSeconds(30));
    assertThat(outcome.succeeded()).isFalse();
    assertThat(outcome.message()).contains("exited 3").contains("containerd is not installed");
  }

  @Test
  void aHungScriptIsKilledAtTheTimeout() throws Exception {
    long started = System.nanoTime();
    Outcome outcome = run("reset", "sleep 30", new JsonObject(), Duration.ofSeconds(1));
    assertThat(outcome.succeeded()).isFalse();
    assertThat(outcome.message()).contains("timed out");
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(20));
  }

  @Test
  void theShippedScriptsAreInstalledWithoutOverwritingAnOperatorsOwn() throws Exception {
    Files.writeString(scripts.resolve("join.sh"), "# mine");
    ScriptExecutor.installShipped(scripts);
    assertThat(Files.readString(scripts.resolve("join.sh"))).isEqualTo("# mine");
    assertThat(Files.readString(scripts.resolve("prepare.sh"))).contains("::step container-runtime");
    assertThat(Files.readString(scripts.resolve("reset.sh"))).contains("kubeadm reset");
  }
}
