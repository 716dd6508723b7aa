package io.warmmetal.api.ssh;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import io.warmmetal.api.ssh.impl.SshjRunner;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Runs commands on servers over SSH (sshj), never on an event loop: host keys are always verified
 * against the target's pinned fingerprint, every command has a timeout (then it is killed and the
 * result says so), and stdout and stderr are read at once so neither can stall the other.
 */
public interface SshRunner extends AutoCloseable {
  int OUTPUT_LIMIT = 64 * 1024;

  /**
   * The worker pool for talking to servers and BMCs (SSH, ipmitool): its own, so that slow or hung
   * servers cannot take the shared workers that launches and enrollments need.
   */
  static WorkerExecutor outOfBandWorkers(Vertx vertx) {
    return vertx.createSharedWorkerExecutor("warmmetal-out-of-band", 16, 15, TimeUnit.MINUTES);
  }

  static SshRunner create(Vertx vertx) {
    return new SshjRunner(vertx);
  }

  /**
   * Runs {@code command}, feeding it {@code stdin} (secrets go there, never on the command line;
   * null: none). Fails if the server cannot be reached, presents another host key, or refuses the
   * key.
   */
  Future<SshResult> run(SshTarget target, String command, byte[] stdin, Duration timeout);

  /**
   * Copies a local file to {@code remotePath} over SFTP (the server's sftp subsystem), failing if
   * it takes longer than {@code timeout}.
   */
  Future<Void> upload(SshTarget target, Path local, String remotePath, Duration timeout);

  @Override
  void close();
}
