package io.warmmetal.e2e.cluster;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Short host commands (ip, kubeadm phases, mount, curl) run to completion. A failure names the
 * command and what it printed; output is read in full before waiting, so a chatty command cannot
 * block on a full pipe.
 */
public final class Commands {
  private Commands() {}

  /**
   * Runs {@code command} and returns its output (stdout and stderr together); throws if it does not
   * exit 0.
   */
  public static String run(List<String> command) {
    return run(command, Map.of(), 120);
  }

  public static String run(String... command) {
    return run(List.of(command));
  }

  public static String run(List<String> command, Map<String, String> env, int timeoutSeconds) {
    Result r = attempt(command, env, timeoutSeconds);
    if (r.exit != 0) {
      throw new IllegalStateException(
          String.join(" ", command) + " exited " + r.exit + ": " + r.output.strip());
    }
    return r.output;
  }

  /**
   * Runs {@code command}, failing or not; for clean-up, where a missing link or process is not an
   * error.
   */
  public static Result attempt(String... command) {
    return attempt(List.of(command), Map.of(), 60);
  }

  public static Result attempt(List<String> command, Map<String, String> env, int timeoutSeconds) {
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    pb.environment().putAll(env);
    try {
      Process p = pb.start();
      p.getOutputStream().close();
      // Read on another thread so the timeout holds even when the command never closes its output.
      StringBuffer output = new StringBuffer();
      Thread reader =
          new Thread(
              () -> {
                try (var in =
                    new BufferedReader(
                        new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                  String line;
                  while ((line = in.readLine()) != null) {
                    output.append(line).append('\n');
                  }
                } catch (IOException e) {
                  // the process went away
                }
              },
              "command-output");
      reader.setDaemon(true);
      reader.start();
      if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        reader.join(1000);
        return new Result(-1, "timed out after " + timeoutSeconds + " s; it printed:\n" + output);
      }
      reader.join(5000);
      return new Result(p.exitValue(), output.toString());
    } catch (Exception e) {
      return new Result(-1, e.toString());
    }
  }

  public record Result(int exit, String output) {
    public boolean ok() {
      return exit == 0;
    }
  }
}
