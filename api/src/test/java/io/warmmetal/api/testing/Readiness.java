package io.warmmetal.api.testing;

import io.warmmetal.protocol.testing.Await;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * Waiting (through {@link Await}) until a started server process answers 200 on a loopback path —
 * failing at once, with its log, if the process exits first.
 */
public final class Readiness {
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private Readiness() {}

  public static void await(
      String name, Process process, int port, String path, Duration timeout, Supplier<String> log)
      throws InterruptedException {
    Await.until(
        name + " answers 200 on 127.0.0.1:" + port + path,
        () -> answers(name, process, port, path, log),
        timeout.toMillis(),
        log);
  }

  private static boolean answers(
      String name, Process process, int port, String path, Supplier<String> log) {
    if (!process.isAlive()) {
      throw new AssertionError(name + " exited with " + process.exitValue() + ":\n" + log.get());
    }
    try {
      HttpRequest request =
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
              .timeout(Duration.ofSeconds(5))
              .build();
      return HTTP.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
    } catch (IOException notYet) {
      return false; // not listening yet
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // Await's next sleep throws it
      return false;
    }
  }
}
