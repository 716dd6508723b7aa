package io.warmmetal.api.ssh;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.ErrorCode;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;

/**
 * Installs and (re)starts the agent on a server over SSH. The jar is uploaded by SFTP only when the
 * server lacks this exact build (compared by SHA-256, and checked again after the upload); its
 * settings, enrollment token included, travel on stdin into a 0600 environment file; the agent runs
 * as a systemd unit where systemd runs, else as a background process with a pid file (containers,
 * minimal systems).
 */
public final class AgentInstaller {
  public static final String UNIT = "warmmetal-agent";
  public static final String JAR = "warmmetal-agent.jar";

  private final Vertx vertx;
  private final SshRunner ssh;
  private final Optional<Path> jar;
  private final String dir;
  private final Duration timeout;
  private volatile String jarDigest;

  public AgentInstaller(
      Vertx vertx, SshRunner ssh, Optional<Path> jar, String installDir, Duration timeout) {
    this.vertx = vertx;
    this.ssh = ssh;
    this.jar = jar;
    this.dir = installDir;
    this.timeout = timeout;
  }

  /** Fails with 503 unless there is an agent jar to install (looked for at startup). */
  public void requireJar() {
    if (jar.isEmpty()) {
      throw ApiError.of(
          ErrorCode.ServiceUnavailable,
          "this API has no agent jar to install over SSH: build it "
              + "(mvn package) or set WARMMETAL_AGENT_JAR");
    }
  }

  /**
   * Uploads the agent if needed, writes {@code environment} (WARMMETAL_AGENT_* settings, secrets
   * among them) to its environment file, and (re)starts it. The result is the install script's; the
   * upload fails the future.
   */
  public Future<SshResult> install(SshTarget target, Map<String, String> environment) {
    return digest()
        .compose(
            digest ->
                ssh.run(
                        target,
                        "sha256sum "
                            + Shell.quote(dir + "/" + JAR)
                            + " 2>/dev/null | cut -d' ' -f1",
                        null,
                        timeout)
                    .compose(
                        probe ->
                            digest.equals(probe.stdout().trim())
                                ? Future.succeededFuture()
                                : ssh.run(target, "mkdir -p " + Shell.quote(dir), null, timeout)
                                    .compose(
                                        x ->
                                            ssh.upload(
                                                target,
                                                jar.get(),
                                                dir + "/" + JAR + ".part",
                                                timeout.multipliedBy(10))))
                    .compose(
                        x ->
                            ssh.run(target, installScript(digest), envFile(environment), timeout)));
  }

  /** Restarts the agent the way {@link #install} started it. */
  public Future<SshResult> restart(SshTarget target) {
    return ssh.run(target, "set -e\nD=" + Shell.quote(dir) + "\n" + startScript(), null, timeout);
  }

  /**
   * Runs the agent's own reset script (shipped into its state directory) with empty parameters,
   * then restarts the agent: for a machine whose agent hangs mid-command.
   */
  public Future<SshResult> reset(SshTarget target) {
    return ssh.run(
        target,
        "set -e\nD="
            + Shell.quote(dir)
            + "\n"
            + "[ -x \"$D/state/scripts/reset.sh\" ] || { echo 'no reset script in '\"$D\"'/state/scripts' >&2; exit 4; }\n"
            + "printf '{}' | \"$D/state/scripts/reset.sh\"\n"
            + startScript(),
        null,
        timeout);
  }

  /** Runs a command to recover a server (a reboot, typically). */
  public Future<SshResult> run(SshTarget target, String command) {
    return ssh.run(target, command, null, timeout);
  }

  private String installScript(String digest) {
    return "set -e\n"
        + "D="
        + Shell.quote(dir)
        + "\n"
        + "umask 077\n"
        + "mkdir -p \"$D/state\"\n"
        + "if [ -f \"$D/"
        + JAR
        + ".part\" ]; then\n"
        + "  echo '"
        + digest
        + "  '\"$D/"
        + JAR
        + ".part\" | sha256sum -c --quiet -\n"
        + "  chmod 0644 \"$D/"
        + JAR
        + ".part\"\n"
        + "  mv \"$D/"
        + JAR
        + ".part\" \"$D/"
        + JAR
        + "\"\n"
        + "fi\n"
        + "cat > \"$D/agent.env.part\"\n"
        + "mv \"$D/agent.env.part\" \"$D/agent.env\"\n"
        + startScript();
  }

  /**
   * Starts (or restarts) the agent in {@code $D}: a systemd unit if systemd runs, else a background
   * process.
   */
  private static String startScript() {
    return "JAVA=$(command -v java) || { echo 'java (17 or newer) is not installed on this server' >&2; exit 3; }\n"
        + "if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then\n"
        + "  cat > /etc/systemd/system/"
        + UNIT
        + ".service <<UNIT\n"
        + "[Unit]\n"
        + "Description=WarmMetal agent\n"
        + "Wants=network-online.target\n"
        + "After=network-online.target\n"
        + "[Service]\n"
        + "EnvironmentFile=$D/agent.env\n"
        + "ExecStart=$JAVA -jar $D/"
        + JAR
        + "\n"
        + "Restart=always\n"
        + "RestartSec=2\n"
        + "[Install]\n"
        + "WantedBy=multi-user.target\n"
        + "UNIT\n"
        + "  systemctl daemon-reload\n"
        + "  systemctl enable "
        + UNIT
        + " >/dev/null 2>&1\n"
        + "  systemctl restart "
        + UNIT
        + "\n"
        + "  echo 'agent started: systemd unit "
        + UNIT
        + "'\n"
        + "else\n"
        // Only if the pid is still our agent's: after a crash long ago it may be another process's
        // now.
        + "  P=$(cat \"$D/agent.pid\" 2>/dev/null || true)\n"
        + "  if [ -n \"$P\" ] && tr '\\0' ' ' < /proc/$P/cmdline 2>/dev/null | grep -q \"$D/"
        + JAR
        + "\"; then\n"
        + "    kill \"$P\" 2>/dev/null || true\n"
        // Wait for it to go (a zombie counts as gone), then insist.
        + "    for i in $(seq 50); do\n"
        + "      kill -0 \"$P\" 2>/dev/null && ! grep -q '^State:.*Z' /proc/$P/status 2>/dev/null || break\n"
        + "      sleep 0.2\n"
        + "    done\n"
        + "    kill -9 \"$P\" 2>/dev/null || true\n"
        + "  fi\n"
        + "  (set -a; . \"$D/agent.env\"; set +a; exec nohup \"$JAVA\" -jar \"$D/"
        + JAR
        + "\" >>\"$D/agent.log\" 2>&1 "
        + "</dev/null) &\n"
        + "  echo $! > \"$D/agent.pid\"\n"
        + "  echo \"agent started: process $! (no systemd on this server)\"\n"
        + "fi\n";
  }

  /** {@code KEY='value'} lines, read alike by systemd's EnvironmentFile and a POSIX shell. */
  static byte[] envFile(Map<String, String> environment) {
    StringBuilder out = new StringBuilder();
    environment.forEach((k, v) -> out.append(k).append("='").append(v).append("'\n"));
    return out.toString().getBytes(StandardCharsets.UTF_8);
  }

  /** The jar's SHA-256, computed once, on a worker thread. */
  private Future<String> digest() {
    if (jarDigest != null) {
      return Future.succeededFuture(jarDigest);
    }
    return vertx
        .executeBlocking(
            () -> {
              MessageDigest sha = MessageDigest.getInstance("SHA-256");
              try (InputStream in = new DigestInputStream(Files.newInputStream(jar.get()), sha)) {
                in.transferTo(OutputStream.nullOutputStream());
              } catch (IOException e) {
                throw new IOException(
                    "reading the agent jar " + jar.get() + ": " + e.getMessage(), e);
              }
              return HexFormat.of().formatHex(sha.digest());
            },
            false)
        .onSuccess(d -> jarDigest = d);
  }
}
