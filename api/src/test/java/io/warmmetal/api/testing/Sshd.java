package io.warmmetal.api.testing;

import io.warmmetal.protocol.testing.Await;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real OpenSSH {@code sshd} (Debian's openssh-server, which CI installs) on a free loopback port,
 * with a throwaway host key, taking one throwaway client key for the user running the tests. For
 * tests of what WarmMetal does over SSH.
 */
public final class Sshd implements AutoCloseable {
  public static final Path SSHD = Path.of("/usr/sbin/sshd");
  public final int port;
  public final String user = System.getProperty("user.name");

  /** The host key's fingerprint as {@code ssh-keygen -lf} prints it ({@code SHA256:…}). */
  public final String hostKeyFingerprint;

  /** The client's private key (OpenSSH format) that sshd accepts. */
  public final String clientKey;

  /** Its public half, as in authorized_keys ({@code ssh-ed25519 AAAA…}, without the comment). */
  public final String clientPublicKey;

  private final Path dir;
  private final Process process;

  private Sshd(Path dir, int port, String hostKeyFingerprint, String clientKey, Process process) {
    this.dir = dir;
    this.port = port;
    this.hostKeyFingerprint = hostKeyFingerprint;
    this.clientKey = clientKey;
    String[] pub = readPublic(dir.resolve("client_ed25519.pub"));
    this.clientPublicKey = pub[0] + " " + pub[1];
    this.process = process;
  }

  public static Sshd start() throws Exception {
    RequiredTool.at(SSHD, "openssh-server");
    RequiredTool.onPath("ssh-keygen", "openssh-client");
    Path dir = Files.createTempDirectory("warmmetal-sshd");
    keygen(dir.resolve("host_ed25519"));
    keygen(dir.resolve("client_ed25519"));
    Files.copy(dir.resolve("client_ed25519.pub"), dir.resolve("authorized_keys"));
    if ("root".equals(System.getProperty("user.name"))) {
      Files.createDirectories(
          Path.of("/run/sshd")); // root's sshd chroots there (privilege separation); others' do not
    }
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    Path config = dir.resolve("sshd_config");
    Files.writeString(
        config,
        String.join(
            "\n",
            "Port " + port,
            "ListenAddress 127.0.0.1",
            "HostKey " + dir.resolve("host_ed25519"),
            "PidFile " + dir.resolve("sshd.pid"),
            "UsePAM no",
            "PubkeyAuthentication yes",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "AuthenticationMethods publickey",
            "PermitRootLogin prohibit-password",
            "AuthorizedKeysFile " + dir.resolve("authorized_keys"),
            "StrictModes no",
            "Subsystem sftp internal-sftp",
            ""));
    Process sshd =
        new ProcessBuilder(SSHD.toString(), "-D", "-e", "-f", config.toString())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("sshd.log").toFile())
            .start();
    String fingerprint =
        run("ssh-keygen", "-lf", dir.resolve("host_ed25519.pub").toString()).split(" ")[1];
    Sshd server =
        new Sshd(dir, port, fingerprint, Files.readString(dir.resolve("client_ed25519")), sshd);
    try {
      Await.until(
          "sshd listening on 127.0.0.1:" + port,
          () -> listening(port, sshd, dir),
          60_000,
          () -> sshdLog(dir));
    } catch (AssertionError | InterruptedException e) {
      server.close();
      throw e;
    }
    return server;
  }

  private static boolean listening(int port, Process sshd, Path dir) {
    if (!sshd.isAlive()) {
      throw new AssertionError("sshd exited: " + sshdLog(dir));
    }
    try (Socket probe = new Socket("127.0.0.1", port)) {
      return true;
    } catch (IOException notYet) {
      return false;
    }
  }

  private static String sshdLog(Path dir) {
    try {
      return "sshd.log:\n" + Files.readString(dir.resolve("sshd.log"));
    } catch (IOException e) {
      return "(no sshd.log: " + e.getMessage() + ")";
    }
  }

  private static String[] readPublic(Path file) {
    try {
      return Files.readString(file).trim().split(" ");
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A fingerprint of a key this server does not have. */
  public String otherFingerprint() throws Exception {
    Path other = dir.resolve("other_ed25519");
    if (!Files.exists(other)) {
      keygen(other);
    }
    return run("ssh-keygen", "-lf", other + ".pub").split(" ")[1];
  }

  private static void keygen(Path file) throws Exception {
    run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", file.toString());
  }

  private static String run(String... command) throws Exception {
    Process p = new ProcessBuilder(List.of(command)).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IllegalStateException(String.join(" ", command) + " failed: " + out);
    }
    return out;
  }

  @Override
  public void close() throws Exception {
    process.destroy();
    if (!process.waitFor(5, TimeUnit.SECONDS)) {
      process.destroyForcibly();
    }
  }
}
