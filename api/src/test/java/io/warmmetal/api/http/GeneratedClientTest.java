package io.warmmetal.api.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiFixture;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A client in another language, generated from openapi.yaml, launches against the real API:
 * .ci/client-ts.sh generates TypeScript types (openapi-typescript), type-checks
 * api/src/test/ts/launch.ts with them (tsc --strict) and runs it with openapi-fetch: shapes, a
 * launch with a clientToken and its retry, a read, a termination.
 */
@ExtendWith(VertxExtension.class)
@Tag("processes")
class GeneratedClientTest {
  private static final long TIMEOUT_SECONDS =
      300; // a first run installs the pinned toolchain with npm

  @Test
  void aTypeScriptClientGeneratedFromTheContractLaunchesAndTerminates(Vertx vertx)
      throws Exception {
    Path root = repositoryRoot();
    for (String tool : new String[] {"node", "npm"}) {
      if (!onPath(tool)) {
        fail(
            tool
                + " is not on PATH: the generated-client test needs Node.js and npm. Install them (Debian: "
                + "apt-get install nodejs npm), then run .ci/client-ts.sh install, as CI does before the tests.");
      }
    }
    try (ApiFixture fx = ApiFixture.start(vertx)) {
      fx.registerMachines(2, ApiFixture.facts(8, 32), true);

      ProcessBuilder pb =
          new ProcessBuilder("bash", root.resolve(".ci/client-ts.sh").toString(), "run")
              .directory(root.toFile());
      pb.environment().put("WARMMETAL_API_URL", "http://127.0.0.1:" + fx.api.port());
      pb.environment().put("WARMMETAL_TOKEN", ApiFixture.ADMIN);
      pb.environment().put("CLIENT_TS_OUT", root.resolve("api/target/client-ts").toString());
      Process process = pb.start();
      process.getOutputStream().close();
      // Both streams drained at once, so neither fills its pipe and stalls the script.
      CompletableFuture<String> stdout = drain(process.getInputStream());
      CompletableFuture<String> stderr = drain(process.getErrorStream());
      if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        fail(
            ".ci/client-ts.sh run took over "
                + TIMEOUT_SECONDS
                + " s\nstdout:\n"
                + stdout.getNow("")
                + "\nstderr:\n"
                + stderr.getNow(""));
      }
      String out = stdout.get(10, TimeUnit.SECONDS);
      String err = stderr.get(10, TimeUnit.SECONDS);
      assertThat(process.exitValue())
          .as(".ci/client-ts.sh run\nstdout:\n%s\nstderr:\n%s", out, err)
          .isZero();

      Matcher launched =
          Pattern.compile("^launched (i-[0-9a-f]{17})$", Pattern.MULTILINE).matcher(out);
      assertThat(launched.find())
          .as("the script names the instance it launched:\n%s", out)
          .isTrue();
      String instanceId = launched.group(1);
      assertThat(
              fx.count(
                  "SELECT count(*) FROM instances WHERE id = $1 AND state IN ('shutting-down', 'terminated')",
                  instanceId))
          .as("instance %s, launched and terminated by the generated client", instanceId)
          .isEqualTo(1);
      assertThat(fx.count("SELECT count(*) FROM instances"))
          .as("one launch, its retry answered from it")
          .isEqualTo(1);
    }
  }

  private static CompletableFuture<String> drain(InputStream stream) {
    return CompletableFuture.supplyAsync(
        () -> {
          try (stream) {
            return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
          } catch (IOException e) {
            return "(unreadable: " + e + ")";
          }
        });
  }

  private static boolean onPath(String tool) {
    String path = System.getenv().getOrDefault("PATH", "");
    for (String dir : path.split(File.pathSeparator)) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, tool))) {
        return true;
      }
    }
    return false;
  }

  /** The checkout holding .ci/client-ts.sh: surefire runs in api/, an IDE may run at the root. */
  private static Path repositoryRoot() {
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      if (Files.isRegularFile(dir.resolve(".ci/client-ts.sh"))) {
        return dir;
      }
    }
    throw new AssertionError("no .ci/client-ts.sh above " + Path.of("").toAbsolutePath());
  }
}
