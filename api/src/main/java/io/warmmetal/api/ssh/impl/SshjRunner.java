package io.warmmetal.api.ssh.impl;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import io.warmmetal.api.ssh.SshResult;
import io.warmmetal.api.ssh.SshRunner;
import io.warmmetal.api.ssh.SshTarget;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import net.schmizz.sshj.DefaultConfig;
import net.schmizz.sshj.SSHClient;
import net.schmizz.sshj.connection.ConnectionException;
import net.schmizz.sshj.connection.channel.direct.Session;
import net.schmizz.sshj.connection.channel.direct.Signal;
import net.schmizz.sshj.sftp.SFTPClient;
import net.schmizz.sshj.transport.verification.FingerprintVerifier;
import net.schmizz.sshj.userauth.keyprovider.KeyProvider;
import net.schmizz.sshj.xfer.FileSystemFile;

/**
 * {@link SshRunner} on sshj: one connection per command, on a worker thread; the streams read by
 * two more.
 */
public final class SshjRunner implements SshRunner {
  private static final ScheduledExecutorService WATCHDOG =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "warmmetal-ssh-watchdog");
            t.setDaemon(true);
            return t;
          });
  private final WorkerExecutor workers;
  private final ExecutorService readers =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "warmmetal-ssh-reader");
            t.setDaemon(true);
            return t;
          });

  public SshjRunner(Vertx vertx) {
    this.workers = SshRunner.outOfBandWorkers(vertx);
  }

  @Override
  public Future<SshResult> run(SshTarget target, String command, byte[] stdin, Duration timeout) {
    return workers.executeBlocking(() -> runBlocking(target, command, stdin, timeout), false);
  }

  @Override
  public Future<Void> upload(SshTarget target, Path local, String remotePath, Duration timeout) {
    return workers.executeBlocking(
        () -> {
          try (SSHClient ssh = connect(target, timeout);
              SFTPClient sftp = ssh.newSFTPClient()) {
            // A stalled transfer is cut off at the deadline: closing the connection fails the
            // blocked write.
            ScheduledFuture<?> watchdog =
                WATCHDOG.schedule(() -> close(ssh), timeout.toMillis(), TimeUnit.MILLISECONDS);
            try {
              sftp.put(new FileSystemFile(local.toFile()), remotePath);
            } catch (IOException e) {
              if (watchdog.isDone()) {
                throw new IOException(
                    "the upload to "
                        + target
                        + " did not finish within "
                        + timeout.toSeconds()
                        + " s");
              }
              throw e;
            } finally {
              watchdog.cancel(false);
            }
          }
          return null;
        },
        false);
  }

  /** Connected and logged in, the host key verified against the pinned fingerprint. */
  private static SSHClient connect(SshTarget target, Duration timeout) throws IOException {
    SSHClient ssh = new SSHClient(new DefaultConfig());
    try {
      ssh.addHostKeyVerifier(FingerprintVerifier.getInstance(target.hostKeyFingerprint()));
      int millis = (int) Math.min(Integer.MAX_VALUE, Math.max(1, timeout.toMillis()));
      ssh.setConnectTimeout(millis);
      ssh.setTimeout(millis);
      ssh.connect(target.host(), target.port());
      KeyProvider key = ssh.loadKeys(target.privateKey(), null, null);
      ssh.authPublickey(target.user(), key);
      return ssh;
    } catch (IOException | RuntimeException e) {
      close(ssh);
      throw e;
    }
  }

  private static void close(SSHClient ssh) {
    try {
      ssh.close();
    } catch (IOException ignored) {
      // closing a broken connection
    }
  }

  private SshResult runBlocking(SshTarget target, String command, byte[] stdin, Duration timeout)
      throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    try (SSHClient ssh = connect(target, timeout)) {
      Session session = ssh.startSession();
      Session.Command cmd = session.exec(command);
      Output stdout = new Output(readers, cmd.getInputStream());
      Output stderr = new Output(readers, cmd.getErrorStream());
      try (OutputStream in = cmd.getOutputStream()) {
        if (stdin != null) {
          in.write(stdin);
        }
      }
      try {
        cmd.join(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (ConnectionException expired) {
        // Past the timeout: ask sshd to kill the command, then drop the connection without waiting
        // for a polite
        // close (sshd ends the session; a command that ignores the lost pipes may linger on the
        // server until done).
        try {
          cmd.signal(Signal.KILL);
        } catch (IOException ignored) {
          // not every server honours signals
        }
        ssh.disconnect();
        return new SshResult(null, stdout.text(), stderr.text(), true);
      }
      SshResult result = new SshResult(cmd.getExitStatus(), stdout.text(), stderr.text(), false);
      session.close();
      return result;
    }
  }

  /**
   * A stream of the command read to its end on a reader thread, up to the limit; what came is kept
   * on errors.
   */
  private static final class Output {
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final java.util.concurrent.Future<?> reading;

    Output(ExecutorService readers, InputStream in) {
      reading =
          readers.submit(
              () -> {
                byte[] buf = new byte[8192];
                try {
                  for (int n; (n = in.read(buf)) >= 0; ) {
                    synchronized (bytes) {
                      int room = OUTPUT_LIMIT - bytes.size();
                      if (room > 0) {
                        bytes.write(
                            buf,
                            0,
                            Math.min(
                                n, room)); // past the cap: read on (the command must not block)
                      }
                    }
                  }
                } catch (IOException ended) {
                  // the connection went (a timeout): keep what came
                }
                return null;
              });
    }

    String text() {
      try {
        reading.get(2, TimeUnit.SECONDS);
      } catch (Exception stillGoing) {
        reading.cancel(true);
      }
      synchronized (bytes) {
        return bytes.toString(StandardCharsets.UTF_8);
      }
    }
  }

  @Override
  public void close() {
    workers.close();
    readers.shutdownNow();
  }
}
