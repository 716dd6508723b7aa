package io.warmmetal.fleet;

import io.warmmetal.agent.commands.Executor;
import io.warmmetal.protocol.channel.Command;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * One line per command a simulated agent starts — {@code <epoch microseconds> <command id> <kind>
 * <instance id or ->} — so that a benchmark in another process can count how often each command ran
 * and when each push arrived (the clock is the host's wall clock, which every process on it
 * shares). The time is taken on the agent's event loop as the command starts; a thread of its own
 * writes the lines, flushing whenever it has caught up.
 */
public final class RunsLog {
  private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

  private RunsLog(BufferedWriter out) {
    Thread writer = new Thread(() -> write(out), "fleet-runs-log");
    writer.setDaemon(true);
    writer.start();
  }

  /** Appends to {@code file} (created if absent). */
  public static RunsLog open(Path file) throws IOException {
    return new RunsLog(
        Files.newBufferedWriter(
            file, StandardCharsets.US_ASCII, StandardOpenOption.CREATE, StandardOpenOption.APPEND));
  }

  /** {@code executor}, with each command it starts logged first. */
  public Executor recording(Executor executor) {
    return (command, progress) -> {
      started(command);
      return executor.run(command, progress);
    };
  }

  private void started(Command command) {
    Instant now = Instant.now();
    long micros = now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    lines.add(
        micros
            + " "
            + command.id()
            + " "
            + command.kind().wire()
            + " "
            + (command.instanceId() == null ? "-" : command.instanceId()));
  }

  private void write(BufferedWriter out) {
    try {
      while (true) {
        out.write(lines.take());
        out.newLine();
        if (lines.isEmpty()) {
          out.flush();
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the runs log", e);
    }
  }
}
