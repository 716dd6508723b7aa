package io.warmmetal.api.testing;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A tool run as a process that answers HTTP on a loopback port, logging to a file: started, awaited
 * until its readiness path answers 200 (failing with its log if it exits or never does), asked, and
 * stopped.
 */
final class HttpProcess implements AutoCloseable {
  private final Process process;
  private final Path log;
  private final int port;
  private final HttpClient http = HttpClient.newHttpClient();

  private HttpProcess(Process process, Path log, int port) {
    this.process = process;
    this.log = log;
    this.port = port;
  }

  /**
   * Runs {@code command} (output to {@code log}) and waits for {@code readyPath} on {@code port}.
   */
  static HttpProcess start(List<String> command, Path log, int port, String readyPath)
      throws IOException, InterruptedException {
    Process process =
        new ProcessBuilder(command)
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    HttpProcess started = new HttpProcess(process, log, port);
    try {
      Readiness.await(
          command.get(0), process, port, readyPath, Duration.ofSeconds(60), started::logTail);
    } catch (AssertionError | InterruptedException e) {
      started.close();
      throw e;
    }
    return started;
  }

  int port() {
    return port;
  }

  HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(10))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** The log's last lines, for a failure's message. */
  String logTail() {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(20, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
  }
}
