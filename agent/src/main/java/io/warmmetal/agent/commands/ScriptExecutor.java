package io.warmmetal.agent.commands;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.warmmetal.protocol.channel.Command;
import io.warmmetal.protocol.commands.CommandKind;
import io.warmmetal.protocol.commands.JoinParams;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.Deque;
import java.util.HexFormat;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * Runs a command as the script of its kind ({@code prepare.sh}, {@code join.sh}, {@code reset.sh},
 * {@code reboot.sh}) from the scripts directory — the ones shipped in the agent, or an operator's.
 * A script gets the command's parameters as JSON on standard input (secrets included: never on the
 * command line or in the environment), announces each step by printing {@code ::step NAME}, and
 * succeeds by exiting 0; it is killed after the timeout. Runs on a worker thread.
 */
public final class ScriptExecutor implements Executor {
  /** The agent's environment variables a script sees; everything else is withheld. */
  static final Set<String> PASSED_ON =
      Set.of(
          "PATH",
          "HOME",
          "LANG",
          "LC_ALL",
          "WARMMETAL_KUBE_VERSION",
          "WARMMETAL_PREPULL_IMAGES",
          "WARMMETAL_IMAGE_ARCHIVES",
          "WARMMETAL_DATA_DISKS",
          "WARMMETAL_WIPE_POLICY",
          "WARMMETAL_CRI_SOCKET",
          "WARMMETAL_NODE_NAME",
          "WARMMETAL_KUBELET_ARGS",
          "WARMMETAL_KUBELET_RUN_DIR",
          "WARMMETAL_KUBELET_SUPERVISOR",
          "WARMMETAL_KUBELET_CGROUP_DRIVER",
          "WARMMETAL_KUBELET_FAST_STATUS",
          "WARMMETAL_NODE_IP",
          "WARMMETAL_MIN_MEMORY_MIB");

  private static final int TAIL_LINES = 20;

  private final Vertx vertx;
  private final Path scripts;
  private final Duration timeout;

  public ScriptExecutor(Vertx vertx, Path scripts, Duration timeout) {
    this.vertx = vertx;
    this.scripts = scripts;
    this.timeout = timeout;
  }

  /**
   * Copies the scripts shipped in the agent into {@code dir} (blocking). A script this agent (or an
   * earlier version) installed and nobody changed since is replaced by the shipped one, so an
   * upgraded agent runs its own scripts; one an operator put there or edited is kept. What was
   * installed is remembered by hash in {@code .shipped}.
   */
  public static Path installShipped(Path dir) throws IOException {
    Files.createDirectories(dir);
    Path record = dir.resolve(".shipped");
    Properties installed = new Properties();
    if (Files.exists(record)) {
      try (var in = Files.newBufferedReader(record)) {
        installed.load(in);
      }
    }
    for (CommandKind kind : CommandKind.values()) {
      Path target = dir.resolve(kind + ".sh");
      byte[] shipped;
      try (InputStream in = ScriptExecutor.class.getResourceAsStream("/scripts/" + kind + ".sh")) {
        shipped = in.readAllBytes();
      }
      boolean ours =
          !Files.exists(target)
              || sha256(Files.readAllBytes(target)).equals(installed.getProperty(kind.wire()));
      if (ours) {
        Path staged = dir.resolve("." + kind + ".sh.new");
        Files.write(staged, shipped);
        Files.setPosixFilePermissions(staged, PosixFilePermissions.fromString("rwxr-x---"));
        Files.move(
            staged, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        installed.setProperty(kind.wire(), sha256(shipped));
      }
    }
    Path staged = dir.resolve(".shipped.new");
    try (var out = Files.newBufferedWriter(staged)) {
      installed.store(
          out, "scripts the agent installed (sha256); others are an operator's and left alone");
    }
    Files.move(staged, record, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    return dir;
  }

  private static String sha256(byte[] content) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public Future<Outcome> run(Command command, BiConsumer<String, String> progress) {
    Path script = scripts.resolve(command.kind() + ".sh");
    return vertx.executeBlocking(() -> runScript(script, command, progress), false);
  }

  private Outcome runScript(Path script, Command command, BiConsumer<String, String> progress)
      throws Exception {
    if (!Files.isRegularFile(script)) {
      return Outcome.failed("no script " + script);
    }
    ProcessBuilder pb = new ProcessBuilder("/bin/sh", script.toString()).redirectErrorStream(true);
    // Only what scripts need: never the agent's own environment (it may hold the enrollment token).
    Map<String, String> env = pb.environment();
    Map<String, String> inherited = Map.copyOf(env);
    env.clear();
    for (Map.Entry<String, String> e : inherited.entrySet()) {
      if (PASSED_ON.contains(e.getKey())) {
        env.put(e.getKey(), e.getValue());
      }
    }
    // A private temporary directory per command, removed afterwards even if the script is killed.
    Path tmp =
        Files.createTempDirectory(
            "warmmetal-" + command.kind(),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    env.put("TMPDIR", tmp.toString());
    try {
      return runIn(pb, env, script, command, progress);
    } finally {
      deleteTree(tmp);
    }
  }

  private Outcome runIn(
      ProcessBuilder pb,
      Map<String, String> env,
      Path script,
      Command command,
      BiConsumer<String, String> progress)
      throws Exception {
    env.put("WARMMETAL_COMMAND_ID", command.id());
    env.put("WARMMETAL_COMMAND", command.kind().wire());
    if (command.instanceId() != null) {
      env.put("WARMMETAL_INSTANCE_ID", command.instanceId());
    }
    long started = System.nanoTime();
    Process process = pb.start();
    try (OutputStream stdin = process.getOutputStream()) {
      stdin.write(
          new JsonObject()
              .put("command", command.kind().wire())
              .put("params", command.params().toJson())
              .encode()
              .getBytes(StandardCharsets.UTF_8));
    } catch (IOException closedEarly) {
      // the script need not read its input
    }
    Deque<String> tail = new ArrayDeque<>();
    Thread reader =
        new Thread(() -> read(process, progress, tail), "script-output-" + command.id());
    reader.start();
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      // The script's children (kubeadm, dd, …) go too: they would hold the output open and keep
      // changing the host.
      process.descendants().forEach(ProcessHandle::destroyForcibly);
      process.destroyForcibly();
      reader.join(1000);
      return Outcome.failed(command.kind() + " timed out after " + timeout.toSeconds() + " s");
    }
    reader.join(5000);
    long ms = (System.nanoTime() - started) / 1_000_000;
    String output;
    synchronized (tail) {
      output = String.join("\n", tail);
    }
    if (process.exitValue() == 0) {
      return Outcome.ok(command.kind() + " took " + ms + " ms");
    }
    // User data is a secret, and so may be what it prints: its output stays on the host.
    String why =
        command.params() instanceof JoinParams join && join.userData() != null
            ? "(the output of user data is not reported)"
            : output;
    return Outcome.failed(
        command.kind() + " exited " + process.exitValue() + " after " + ms + " ms: " + why);
  }

  private static void deleteTree(Path dir) {
    try (var walk = Files.walk(dir)) {
      walk.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    } catch (IOException e) {
      // best effort
    }
  }

  /**
   * Reads the script's output as it comes: steps become progress, the last lines explain a failure.
   */
  private static void read(
      Process process, BiConsumer<String, String> progress, Deque<String> tail) {
    try (BufferedReader out =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = out.readLine()) != null) {
        if (line.startsWith("::step ")) {
          progress.accept(line.substring(7).trim(), "started");
        }
        synchronized (tail) {
          tail.addLast(line.length() > 300 ? line.substring(0, 300) : line);
          if (tail.size() > TAIL_LINES) {
            tail.removeFirst();
          }
        }
      }
    } catch (IOException e) {
      // the process went away; its exit code tells
    }
  }
}
