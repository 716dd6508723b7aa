package io.warmmetal.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.warmmetal.agent.commands.Executor;
import io.warmmetal.agent.commands.Outcome;
import io.warmmetal.protocol.channel.Command;
import io.warmmetal.protocol.commands.CommandKind;
import io.warmmetal.protocol.commands.PrepareParams;
import io.warmmetal.protocol.commands.ResetParams;
import io.warmmetal.protocol.testing.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The runs log: a line per command started, in order, with when it started, its id, kind and
 * instance.
 */
class RunsLogTest {

  @Test
  void eachCommandStartedIsOneLineAndStillRuns() throws Exception {
    Path file = Files.createTempFile("runs", ".log");
    AtomicInteger ran = new AtomicInteger();
    Executor executor =
        RunsLog.open(file)
            .recording(
                (command, progress) -> {
                  ran.incrementAndGet();
                  return Future.succeededFuture(Outcome.ok("done"));
                });
    long before = Instant.now().toEpochMilli() * 1000;
    executor.run(
        new Command("cmd-1", 1, CommandKind.PREPARE, null, new PrepareParams()), (s, m) -> {});
    executor.run(
        new Command("cmd-2", 2, CommandKind.RESET, "i-0123456789abcdef0", new ResetParams()),
        (s, m) -> {});
    long after = Instant.now().toEpochMilli() * 1000 + 1000;
    assertThat(ran).hasValue(2);

    // The writer thread flushes once it has caught up.
    Await.until("both runs written", () -> lines(file).size() >= 2, 5_000);
    List<String> lines = Files.readAllLines(file);
    assertThat(lines).hasSize(2);
    String[] first = lines.get(0).split(" ");
    assertThat(Long.parseLong(first[0])).isBetween(before, after);
    assertThat(List.of(first).subList(1, 4)).containsExactly("cmd-1", "prepare", "-");
    assertThat(lines.get(1)).endsWith(" cmd-2 reset i-0123456789abcdef0");
  }

  private static List<String> lines(Path file) {
    try {
      return Files.exists(file) ? Files.readAllLines(file) : List.of();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
