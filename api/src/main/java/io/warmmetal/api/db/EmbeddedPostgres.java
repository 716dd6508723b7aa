package io.warmmetal.api.db;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.compressors.xz.XZCompressorInputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A PostgreSQL server run from the zonky binaries on the classpath, with its cluster in the data
 * directory, so the API starts with nothing installed but Java.
 *
 * <p>PostgreSQL refuses to run as root, so as root every PostgreSQL process runs as a dedicated
 * system user ({@value #SYSTEM_USER}, created if missing) through {@code setpriv}, and the cluster
 * directory is that user's alone (0700). The cluster listens on 127.0.0.1 only and requires a
 * generated password. All methods block: call them from a worker thread.
 */
public final class EmbeddedPostgres implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedPostgres.class);
  private static final String BUNDLE = "postgres-linux-x86_64.txz";

  /** The system user PostgreSQL runs as when the API runs as root; created on first use. */
  static final String SYSTEM_USER = "warmmetal-pg";

  private static final String SUPERUSER = "postgres";

  private final Path home;
  private final Path passwordFile;
  private final boolean asRoot;
  private String runAsGroup;
  private int port;
  private Path bin;
  private FileChannel lockChannel;
  private FileLock lock;
  private String password;
  private boolean running;

  private EmbeddedPostgres(Path home, Path passwordFile, boolean asRoot) {
    this.home = home;
    this.passwordFile = passwordFile;
    this.asRoot = asRoot;
  }

  /**
   * Prepares (extracting binaries and running initdb on first use) and starts a server whose
   * cluster belongs to {@code dataDir}.
   */
  public static EmbeddedPostgres start(Path dataDir) throws IOException {
    boolean asRoot = "root".equals(System.getProperty("user.name"));
    Path home = dataDir.resolve("postgres");
    if (asRoot && !traversableByOthers(dataDir)) {
      // The unprivileged user cannot reach the data directory (e.g. under /root): keep the cluster
      // in a
      // root-owned system location keyed by the data directory instead.
      home = Path.of("/var/lib/warmmetal", "postgres-" + shortHash(dataDir.toString()));
      LOG.info(
          "Data directory {} is not reachable by '{}'; keeping the embedded cluster in {}",
          dataDir,
          SYSTEM_USER,
          home);
    }
    EmbeddedPostgres pg = new EmbeddedPostgres(home, dataDir.resolve("postgres-password"), asRoot);
    try {
      pg.startServer();
    } catch (IOException | RuntimeException e) {
      pg.close();
      throw e;
    }
    return pg;
  }

  /** A {@code postgresql://} URL for the given database, with the generated credentials. */
  public String url(String database) {
    return "postgresql://" + SUPERUSER + ":" + password + "@127.0.0.1:" + port + "/" + database;
  }

  public int port() {
    return port;
  }

  /** Creates the database if it does not exist yet. */
  public void ensureDatabase(String database) throws SQLException {
    if (!database.matches("[a-z_][a-z0-9_]*")) {
      throw new IllegalArgumentException("unsafe database name: " + database);
    }
    try (Connection c =
        DriverManager.getConnection(
            "jdbc:postgresql://127.0.0.1:" + port + "/postgres", SUPERUSER, password)) {
      var rs =
          c.createStatement()
              .executeQuery("SELECT 1 FROM pg_database WHERE datname = '" + database + "'");
      if (!rs.next()) {
        c.createStatement().execute("CREATE DATABASE " + database);
      }
    }
  }

  private void startServer() throws IOException {
    Files.createDirectories(home);
    lockDataDir();
    bin = extractBinaries();
    Path data = home.resolve("data");
    Path sockets = home.resolve("run");
    Files.createDirectories(sockets);
    if (!Files.exists(data.resolve("PG_VERSION"))) {
      initCluster(bin, data);
    } else if (Files.exists(data.resolve("postmaster.pid"))) {
      stopOrphan(data);
    }
    password = Files.readString(passwordFile).trim();
    handToPostgresUser(home);
    port = freePort();
    String options =
        "-p "
            + port
            + " -k "
            + sockets
            + " -c listen_addresses=127.0.0.1 -c max_connections=300"
            + " -c shared_buffers=128MB";
    run(
        List.of(
            bin.resolve("pg_ctl").toString(),
            "-D",
            data.toString(),
            "-o",
            options,
            "-l",
            home.resolve("postgres.log").toString(),
            "-w",
            "-t",
            "60",
            "start"),
        90);
    running = true;
    LOG.info("Embedded PostgreSQL listening on 127.0.0.1:{} (cluster {})", port, data);
  }

  /**
   * Holds a lock on the cluster for the life of this process, so two servers never share one
   * embedded database.
   */
  private void lockDataDir() throws IOException {
    lockChannel =
        FileChannel.open(
            passwordFile.resolveSibling(".embedded-postgres.lock"),
            StandardOpenOption.CREATE,
            StandardOpenOption.WRITE);
    try {
      lock = lockChannel.tryLock();
    } catch (OverlappingFileLockException heldInThisProcess) {
      lock = null;
    }
    if (lock == null) {
      lockChannel.close();
      throw new IOException(
          "another WarmMetal API is using the embedded database of "
              + passwordFile.getParent()
              + "; give each server its own WARMMETAL_DATA_DIR");
    }
  }

  /**
   * A server left running by a process that died without stopping it (we hold the lock, so it is
   * nobody's now): stop it so this process can start its own.
   */
  private void stopOrphan(Path data) throws IOException {
    try {
      run(List.of(bin.resolve("pg_ctl").toString(), "-D", data.toString(), "status"), 30);
    } catch (IOException notRunning) {
      return; // a stale pid file; PostgreSQL cleans it up itself
    }
    LOG.warn("Stopping an embedded PostgreSQL left running by an earlier process ({})", data);
    run(
        List.of(
            bin.resolve("pg_ctl").toString(), "-D", data.toString(), "-m", "fast", "-w", "stop"),
        60);
  }

  private void initCluster(Path bin, Path data) throws IOException {
    String generated = HexFormat.of().formatHex(randomBytes(24));
    writeOwnerOnly(passwordFile, generated);
    Path pwfile = home.resolve("initdb-password");
    writeOwnerOnly(pwfile, generated);
    handToPostgresUser(home);
    try {
      run(
          List.of(
              bin.resolve("initdb").toString(),
              "-D",
              data.toString(),
              "-U",
              SUPERUSER,
              "--pwfile=" + pwfile,
              "-A",
              "scram-sha-256",
              "-E",
              "UTF8",
              "--locale=C"),
          120);
    } finally {
      Files.deleteIfExists(pwfile);
    }
  }

  /** Extracts the PostgreSQL bundle once per version; a marker file tells a complete extraction. */
  private Path extractBinaries() throws IOException {
    String arch = System.getProperty("os.arch");
    if (!System.getProperty("os.name").toLowerCase().contains("linux")
        || !(arch.equals("amd64") || arch.equals("x86_64"))) {
      throw new IOException(
          "The embedded PostgreSQL ships for Linux x86_64 only (this is "
              + arch
              + "); set WARMMETAL_DATABASE_URL to use a PostgreSQL server");
    }
    Path target = home.resolve("bin-" + bundleVersion());
    if (Files.exists(target.resolve(".complete"))) {
      return target.resolve("bin");
    }
    try (InputStream raw = EmbeddedPostgres.class.getClassLoader().getResourceAsStream(BUNDLE)) {
      if (raw == null) {
        throw new IOException(
            BUNDLE + " is not on the classpath (io.zonky.test.postgres binaries missing)");
      }
      try (TarArchiveInputStream tar =
          new TarArchiveInputStream(new XZCompressorInputStream(raw))) {
        TarArchiveEntry entry;
        List<String[]> links = new ArrayList<>();
        while ((entry = tar.getNextEntry()) != null) {
          Path out = target.resolve(entry.getName()).normalize();
          if (!out.startsWith(target)) {
            throw new IOException("bundle entry escapes its directory: " + entry.getName());
          }
          if (entry.isDirectory()) {
            Files.createDirectories(out);
          } else if (entry.isSymbolicLink()) {
            links.add(new String[] {out.toString(), entry.getLinkName()});
          } else {
            Files.createDirectories(out.getParent());
            Files.copy(tar, out, StandardCopyOption.REPLACE_EXISTING);
            boolean exec = (entry.getMode() & 0100) != 0;
            Files.setPosixFilePermissions(
                out, PosixFilePermissions.fromString(exec ? "rwxr-xr-x" : "rw-r--r--"));
          }
        }
        for (String[] link : links) {
          Path l = Path.of(link[0]);
          Files.createDirectories(l.getParent());
          Files.deleteIfExists(l);
          Files.createSymbolicLink(l, Path.of(link[1]));
        }
      }
    }
    Files.writeString(target.resolve(".complete"), bundleVersion());
    return target.resolve("bin");
  }

  /**
   * A key for the bundle, so an upgraded bundle is extracted anew: its size (the archive names no
   * version, and the jar holding it has no Maven metadata).
   */
  private static String bundleVersion() throws IOException {
    var url = EmbeddedPostgres.class.getClassLoader().getResource(BUNDLE);
    return url == null ? "missing" : Long.toString(url.openConnection().getContentLengthLong());
  }

  /** The cluster's directory belongs to the user that runs PostgreSQL, and to nobody else. */
  private void handToPostgresUser(Path dir) throws IOException {
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
    if (asRoot) {
      run(List.of("chown", "-R", SYSTEM_USER + ":" + systemGroup(), dir.toString()), 60, false);
    }
  }

  /** Creates the system user on first use (as root) and returns its primary group. */
  private String systemGroup() throws IOException {
    if (runAsGroup == null) {
      if (!succeeds(List.of("id", "-u", SYSTEM_USER))) {
        LOG.info("Creating the system user '{}' to run the embedded PostgreSQL", SYSTEM_USER);
        run(
            List.of(
                "useradd",
                "--system",
                "--no-create-home",
                "--home-dir",
                "/nonexistent",
                "--shell",
                "/usr/sbin/nologin",
                "--user-group",
                SYSTEM_USER),
            60,
            false);
      }
      runAsGroup = output(List.of("id", "-gn", SYSTEM_USER)).strip();
    }
    return runAsGroup;
  }

  private boolean succeeds(List<String> command) {
    try {
      run(command, 30, false);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static String output(List<String> command) throws IOException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    try {
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new IOException(String.join(" ", command) + " failed: " + out.strip());
      }
      return out;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
  }

  private void run(List<String> command, int timeoutSeconds) throws IOException {
    run(command, timeoutSeconds, asRoot);
  }

  private void run(List<String> command, int timeoutSeconds, boolean dropPrivileges)
      throws IOException {
    List<String> full = new ArrayList<>();
    if (dropPrivileges) {
      full.addAll(
          List.of(
              "setpriv", "--reuid=" + SYSTEM_USER, "--regid=" + systemGroup(), "--clear-groups"));
    }
    full.addAll(command);
    Path output = Files.createTempFile("warmmetal-pg", ".out");
    try {
      Process p =
          new ProcessBuilder(full)
              .redirectErrorStream(true)
              .redirectOutput(output.toFile())
              .directory(home.toFile())
              .start();
      if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IOException(command.get(0) + " timed out after " + timeoutSeconds + " s");
      }
      if (p.exitValue() != 0) {
        throw new IOException(
            Path.of(command.get(0)).getFileName()
                + " failed (exit "
                + p.exitValue()
                + "): "
                + Files.readString(output, StandardCharsets.UTF_8).strip());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted running " + command.get(0), e);
    } finally {
      Files.deleteIfExists(output);
    }
  }

  @Override
  public void close() {
    if (running) {
      running = false;
      try {
        run(
            List.of(
                bin.resolve("pg_ctl").toString(),
                "-D",
                home.resolve("data").toString(),
                "-m",
                "fast",
                "-w",
                "stop"),
            60);
        LOG.info("Embedded PostgreSQL stopped");
      } catch (IOException e) {
        LOG.warn("Stopping the embedded PostgreSQL failed: {}", e.getMessage());
      }
    }
    releaseLock();
  }

  private void releaseLock() {
    try {
      if (lock != null) {
        lock.release();
        lockChannel.close();
        lock = null;
      }
    } catch (IOException e) {
      LOG.debug("Releasing the data directory lock: {}", e.getMessage());
    }
  }

  private static boolean traversableByOthers(Path dir) throws IOException {
    for (Path p = dir.toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.exists(p)) {
        Set<PosixFilePermission> perms = Files.getPosixFilePermissions(p);
        if (!perms.contains(PosixFilePermission.OTHERS_EXECUTE)) {
          return false;
        }
      }
    }
    return true;
  }

  private static void writeOwnerOnly(Path file, String content) throws IOException {
    Files.deleteIfExists(file);
    Files.createFile(
        file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    Files.writeString(file, content);
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private static byte[] randomBytes(int n) {
    byte[] b = new byte[n];
    new SecureRandom().nextBytes(b);
    return b;
  }

  private static String shortHash(String s) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(d, 0, 6);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
