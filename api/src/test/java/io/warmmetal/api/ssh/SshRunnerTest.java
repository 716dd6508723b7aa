package io.warmmetal.api.ssh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.Sshd;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Commands over SSH against a real sshd on loopback: output, host key pinning, timeouts. */
@ExtendWith(VertxExtension.class)
@Tag("processes")
class SshRunnerTest {
  private static Sshd sshd;
  private static SshRunner ssh;

  @BeforeAll
  static void start(Vertx vertx) throws Exception {
    sshd = Sshd.start();
    ssh = SshRunner.create(vertx);
  }

  @AfterAll
  static void stop() throws Exception {
    ssh.close();
    sshd.close();
  }

  private static SshTarget target(String fingerprint) {
    return new SshTarget("127.0.0.1", sshd.port, sshd.user, sshd.clientKey, fingerprint);
  }

  @Test
  void runsACommandWithItsInputAndReportsBothStreamsAndTheExitStatus() {
    SshResult r =
        ssh.run(
                target(sshd.hostKeyFingerprint),
                "cat; echo oops >&2; exit 3",
                "a secret on stdin".getBytes(StandardCharsets.UTF_8),
                Duration.ofSeconds(20))
            .await();
    assertThat(r.exitStatus()).isEqualTo(3);
    assertThat(r.stdout()).isEqualTo("a secret on stdin");
    assertThat(r.stderr()).isEqualTo("oops\n");
    assertThat(r.timedOut()).isFalse();
    assertThat(r.succeeded()).isFalse();
  }

  @Test
  void aServerWithAnotherHostKeyIsRefused() throws Exception {
    String wrong = sshd.otherFingerprint();
    assertThatThrownBy(
            () ->
                ssh.run(target(wrong), "touch /tmp/should-not-run", null, Duration.ofSeconds(20))
                    .await())
        .hasMessageContaining("Could not verify")
        .hasMessageContaining("host key");
    assertThatThrownBy(() -> new SshTarget("127.0.0.1", sshd.port, sshd.user, sshd.clientKey, null))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aCommandThatHangsIsStoppedAtItsTimeout() {
    long start = System.nanoTime();
    // The timeout counts from the connection: 10 s leave a cold JVM on a loaded machine time to log
    // in and start it.
    SshResult r =
        ssh.run(
                target(sshd.hostKeyFingerprint),
                "echo started; sleep 60",
                null,
                Duration.ofSeconds(10))
            .await();
    assertThat(r.timedOut()).isTrue();
    assertThat(r.exitStatus()).isNull();
    assertThat(r.stdout()).isEqualTo("started\n");
    // At its 10 s timeout, not when the command would end (60 s): the bound leaves room for a
    // loaded machine.
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(40));
  }
}
