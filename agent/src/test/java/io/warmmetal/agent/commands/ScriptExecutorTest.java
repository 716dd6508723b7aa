package io.warmmetal.agent.commands;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.warmmetal.protocol.channel.Command;
import io.warmmetal.protocol.commands.CommandKind;
import io.warmmetal.protocol.commands.CommandParams;
import io.warmmetal.protocol.commands.JoinParams;
import io.warmmetal.protocol.commands.KubeletSettings;
import io.warmmetal.protocol.commands.KubernetesJoin;
import io.warmmetal.protocol.commands.Taint;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Real scripts, run as real processes. */
class ScriptExecutorTest {
  private Vertx vertx;
  private Path scripts;
  private final List<String> steps = new CopyOnWriteArrayList<>();

  @BeforeEach
  void setUp() throws Exception {
    vertx = Vertx.vertx();
    scripts = Files.createTempDirectory("scripts");
  }

  @AfterEach
  void tearDown() {
    vertx.close().await();
  }

  private Outcome run(CommandKind kind, String script, CommandParams params, Duration timeout)
      throws Exception {
    Files.writeString(scripts.resolve(kind.wire() + ".sh"), script);
    return new ScriptExecutor(vertx, scripts, timeout)
        .run(new Command("cmd-1", 1, kind, "i-1", params), (step, message) -> steps.add(step))
        .await();
  }

  private static JoinParams join(KubernetesJoin kubernetes, String userData) {
    return new JoinParams("warmmetal://m-1", "x86-16c-64g", Map.of(), kubernetes, userData);
  }

  @Test
  void stepsAreReportedAndSecretsArriveOnStandardInputOnly() throws Exception {
    Path seen = scripts.resolve("seen");
    String script =
        """
        set -eu
        echo "::step kubeadm-join"
        cat > %s
        env > %s.env
        echo "::step done"
        """
            .formatted(seen, seen);
    JoinParams params =
        join(
            new KubernetesJoin("10.0.0.1:6443", "sha256:ab", "abcdef.secret", Map.of(), List.of()),
            null);
    Outcome outcome = run(CommandKind.JOIN, script, params, Duration.ofSeconds(30));
    assertThat(outcome.succeeded()).as(outcome.message()).isTrue();
    assertThat(steps).containsExactly("kubeadm-join", "done");
    assertThat(Files.readString(seen)).contains("abcdef.secret");
    assertThat(Files.readString(Path.of(seen + ".env")))
        .contains("WARMMETAL_COMMAND_ID=cmd-1")
        .doesNotContain("abcdef.secret");
  }

  @Test
  void aFailingScriptFailsWithItsLastWords() throws Exception {
    Outcome outcome =
        run(
            CommandKind.PREPARE,
            "echo 'containerd is not installed'; exit 3",
            CommandParams.none(CommandKind.PREPARE),
            Duration.ofSeconds(30));
    assertThat(outcome.succeeded()).isFalse();
    assertThat(outcome.message()).contains("exited 3").contains("containerd is not installed");
  }

  @Test
  void whatUserDataPrintsStaysOnTheHost() throws Exception {
    Outcome outcome =
        run(
            CommandKind.JOIN,
            "echo 'DB_PASSWORD=hunter2'; exit 4",
            join(null, "IyEvYmluL3NoCg=="),
            Duration.ofSeconds(30));
    assertThat(outcome.succeeded()).isFalse();
    assertThat(outcome.message()).contains("exited 4").doesNotContain("hunter2");
  }

  @Test
  void aHungScriptIsKilledAtTheTimeout() throws Exception {
    long started = System.nanoTime();
    Outcome outcome =
        run(
            CommandKind.RESET,
            "sleep 30",
            CommandParams.none(CommandKind.RESET),
            Duration.ofSeconds(1));
    assertThat(outcome.succeeded()).isFalse();
    assertThat(outcome.message()).contains("timed out");
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(20));
  }

  @Test
  void theShippedScriptsAreInstalledWithoutOverwritingAnOperatorsOwn() throws Exception {
    Files.writeString(scripts.resolve("join.sh"), "# mine");
    ScriptExecutor.installShipped(scripts);
    assertThat(Files.readString(scripts.resolve("join.sh"))).isEqualTo("# mine");
    assertThat(Files.readString(scripts.resolve("prepare.sh")))
        .contains("::step container-runtime");
    assertThat(Files.readString(scripts.resolve("reset.sh"))).contains("kubeadm reset");
  }

  @Test
  void anUpgradedAgentReplacesTheScriptsAnOlderOneInstalledButNotOnesAnOperatorEdited()
      throws Exception {
    ScriptExecutor.installShipped(scripts);
    // As an older agent left them: its shipped reset.sh, recorded as installed; prepare.sh edited
    // since.
    String old = "#!/bin/sh\necho an older reset\n";
    Files.writeString(scripts.resolve("reset.sh"), old);
    Properties record = new Properties();
    try (var in = Files.newBufferedReader(scripts.resolve(".shipped"))) {
      record.load(in);
    }
    record.setProperty(
        "reset",
        HexFormat.of()
            .formatHex(
                MessageDigest.getInstance("SHA-256").digest(old.getBytes(StandardCharsets.UTF_8))));
    try (var out = Files.newBufferedWriter(scripts.resolve(".shipped"))) {
      record.store(out, null);
    }
    Files.writeString(
        scripts.resolve("prepare.sh"),
        Files.readString(scripts.resolve("prepare.sh")) + "# local\n");

    ScriptExecutor.installShipped(scripts);
    assertThat(Files.readString(scripts.resolve("reset.sh")))
        .contains("kubeadm reset"); // the new agent's own
    assertThat(Files.readString(scripts.resolve("prepare.sh")))
        .endsWith("# local\n"); // the operator's edit
  }

  @Test
  void theShippedJoinWritesAJoinConfigurationKubeadmCanReadAndLeavesNothingBehind()
      throws Exception {
    ScriptExecutor.installShipped(scripts);
    Path bin = Files.createTempDirectory("fake-bin");
    Path seen = bin.resolve("seen.json");
    // A stand-in kubeadm of the version the test sets that keeps the configuration it was given;
    // the kubelet is
    // systemd's to start, so the script waits for kubeadm alone.
    Files.writeString(
        bin.resolve("kubeadm"),
        "#!/bin/sh\ncase $1 in version) echo $FAKE_VERSION;; join) cp \"$3\" "
            + seen
            + ";; esac\n");
    bin.resolve("kubeadm").toFile().setExecutable(true);
    Path tmp = Files.createTempDirectory("join-tmp");
    ProcessBuilder pb =
        new ProcessBuilder("/bin/sh", scripts.resolve("join.sh").toString())
            .redirectErrorStream(true);
    pb.environment().put("PATH", bin + ":" + System.getenv("PATH"));
    pb.environment().put("TMPDIR", tmp.toString());
    pb.environment().put("FAKE_VERSION", "v1.20.2");
    pb.environment().put("WARMMETAL_KUBELET_SUPERVISOR", "systemd");
    Process p = pb.start();
    JsonObject params =
        new JoinParams(
                "warmmetal://m-1",
                "x86-16c-64g",
                Map.of("topology.kubernetes.io/zone", "rack-3", "owner", "x"),
                new KubernetesJoin(
                    "10.0.0.1:6443",
                    "sha256:ab",
                    "abcdef.0123456789abcdef",
                    Map.of(
                        "team",
                        "ml",
                        "karpenter.sh/nodepool",
                        "a",
                        "node-role.kubernetes.io/worker",
                        ""), // the kubelet would refuse it: left to registration
                    List.of(new Taint("gpu", null, "NoSchedule"))),
                null)
            .toJson();
    try (var in = p.getOutputStream()) {
      in.write(new JsonObject().put("command", "join").put("params", params).encode().getBytes());
    }
    String out = new String(p.getInputStream().readAllBytes());
    assertThat(p.waitFor()).as(out).isZero();
    JsonObject config = new JsonObject(Files.readString(seen));
    assertThat(config.getString("apiVersion"))
        .isEqualTo("kubeadm.k8s.io/v1beta2"); // what kubeadm 1.20 reads
    assertThat(config.getJsonObject("nodeRegistration").getString("criSocket"))
        .isEqualTo("/run/containerd/containerd.sock");
    assertThat(
            config
                .getJsonObject("nodeRegistration")
                .getJsonObject("kubeletExtraArgs")
                .getString("node-labels"))
        .isEqualTo(
            "karpenter.sh/nodepool=a,node.kubernetes.io/instance-type=x86-16c-64g,team=ml,"
                + "topology.kubernetes.io/zone=rack-3");
    assertThat(config.getJsonObject("discovery").getJsonObject("bootstrapToken").getString("token"))
        .isEqualTo("abcdef.0123456789abcdef");
    assertThat(
            config
                .getJsonObject("nodeRegistration")
                .getJsonObject("kubeletExtraArgs")
                .getString("provider-id"))
        .isEqualTo("warmmetal://m-1");
    assertThat(
            config
                .getJsonObject("nodeRegistration")
                .getJsonArray("taints")
                .getJsonObject(0)
                .getString("key"))
        .isEqualTo("gpu");
    try (var left = Files.list(tmp)) {
      assertThat(left).isEmpty(); // the token's file and the parameters are gone
    }
    // A 1.20 kubelet without the start-up status loop computes its status every second.
    assertThat(
            config
                .getJsonObject("nodeRegistration")
                .getJsonObject("kubeletExtraArgs")
                .getString("node-status-update-frequency"))
        .isEqualTo("1s");
    // One that has it (WarmMetal's build, or 1.27 and later) keeps its default.
    for (String[] kubelet :
        List.of(new String[] {"v1.20.2", "true"}, new String[] {"v1.27.3", ""})) {
      pb.environment().put("FAKE_VERSION", kubelet[0]);
      pb.environment().put("WARMMETAL_KUBELET_FAST_STATUS", kubelet[1]);
      Process fast = pb.start();
      try (var in = fast.getOutputStream()) {
        in.write(new JsonObject().put("command", "join").put("params", params).encode().getBytes());
      }
      fast.getInputStream().readAllBytes();
      assertThat(fast.waitFor()).isZero();
      assertThat(
              new JsonObject(Files.readString(seen))
                  .getJsonObject("nodeRegistration")
                  .getJsonObject("kubeletExtraArgs")
                  .containsKey("node-status-update-frequency"))
          .as(kubelet[0] + " " + kubelet[1])
          .isFalse();
    }
    pb.environment().remove("WARMMETAL_KUBELET_FAST_STATUS");

    // kubeadm 1.22 and later read v1beta3, which wants the socket as a URL.
    pb.environment().put("FAKE_VERSION", "v1.23.4");
    Process newer = pb.start();
    try (var in = newer.getOutputStream()) {
      in.write(new JsonObject().put("command", "join").put("params", params).encode().getBytes());
    }
    newer.getInputStream().readAllBytes();
    assertThat(newer.waitFor()).isZero();
    config = new JsonObject(Files.readString(seen));
    assertThat(config.getString("apiVersion")).isEqualTo("kubeadm.k8s.io/v1beta3");
    assertThat(config.getJsonObject("nodeRegistration").getString("criSocket"))
        .isEqualTo("unix:///run/containerd/containerd.sock");

    // A label value that would inject configuration is refused.
    Process bad = pb.start();
    params.getJsonObject("kubernetes").put("nodeLabels", new JsonObject().put("team", "ml,evil=1"));
    try (var in = bad.getOutputStream()) {
      in.write(new JsonObject().put("command", "join").put("params", params).encode().getBytes());
    }
    bad.getInputStream().readAllBytes();
    assertThat(bad.waitFor()).isNotZero();

    // A kubelet the control plane does not accept (the skew policy) fails before kubeadm is asked
    // to do anything;
    // one it accepts joins, the cgroup driver and the node's address passed to the kubelet.
    params.getJsonObject("kubernetes").put("nodeLabels", new JsonObject().put("team", "ml"));
    pb.environment().put("FAKE_VERSION", "v1.20.2");
    pb.environment().put("WARMMETAL_KUBELET_CGROUP_DRIVER", "systemd");
    pb.environment().put("WARMMETAL_NODE_IP", "10.0.0.9");
    for (String plane : List.of("v1.23.0", "v1.19.7", "v2.0.0")) {
      Files.deleteIfExists(seen);
      Process refused = pb.start();
      params.getJsonObject("kubernetes").put("controlPlaneVersion", plane);
      try (var in = refused.getOutputStream()) {
        in.write(new JsonObject().put("command", "join").put("params", params).encode().getBytes());
      }
      String said = new String(refused.getInputStream().readAllBytes());
      assertThat(refused.waitFor()).as(plane).isNotZero();
      assertThat(said).contains("kubelet v1.20.2 cannot join control plane " + plane);
      assertThat(seen).as("kubeadm was not run").doesNotExist();
    }
    Process accepted = pb.start();
    params.getJsonObject("kubernetes").put("controlPlaneVersion", "v1.22.17");
    try (var in = accepted.getOutputStream()) {
      in.write(new JsonObject().put("command", "join").put("params", params).encode().getBytes());
    }
    String said = new String(accepted.getInputStream().readAllBytes());
    assertThat(accepted.waitFor()).as(said).isZero();
    JsonObject args =
        new JsonObject(Files.readString(seen))
            .getJsonObject("nodeRegistration")
            .getJsonObject("kubeletExtraArgs");
    assertThat(args.getString("cgroup-driver")).isEqualTo("systemd");
    assertThat(args.getString("node-ip")).isEqualTo("10.0.0.9");
    assertThat(args.containsKey("max-pods"))
        .as("no kubelet settings: the cluster's configuration stands")
        .isFalse();

    // The node class's kubelet settings reach the kubelet as its flags.
    params
        .getJsonObject("kubernetes")
        .put(
            "kubelet",
            new KubeletSettings(
                    58, Map.of("cpu", "100m", "memory", "256Mi"), Map.of("memory", "512Mi"))
                .toJson());
    Process tuned = pb.start();
    try (var in = tuned.getOutputStream()) {
      in.write(new JsonObject().put("command", "join").put("params", params).encode().getBytes());
    }
    said = new String(tuned.getInputStream().readAllBytes());
    assertThat(tuned.waitFor()).as(said).isZero();
    args =
        new JsonObject(Files.readString(seen))
            .getJsonObject("nodeRegistration")
            .getJsonObject("kubeletExtraArgs");
    assertThat(args.getString("max-pods")).isEqualTo("58");
    assertThat(args.getString("system-reserved")).isEqualTo("cpu=100m,memory=256Mi");
    assertThat(args.getString("kube-reserved")).isEqualTo("memory=512Mi");

    // A reservation that would smuggle in another flag is refused, whoever sent it.
    Files.deleteIfExists(seen);
    params
        .getJsonObject("kubernetes")
        .getJsonObject("kubelet")
        .put("kubeReserved", new JsonObject().put("memory", "1Gi,--anonymous-auth=true"));
    Process smuggled = pb.start();
    try (var in = smuggled.getOutputStream()) {
      in.write(new JsonObject().put("command", "join").put("params", params).encode().getBytes());
    }
    said = new String(smuggled.getInputStream().readAllBytes());
    assertThat(smuggled.waitFor()).as(said).isNotZero();
    assertThat(said).contains("refusing kubelet --kube-reserved");
    assertThat(seen).as("kubeadm was not run").doesNotExist();
  }
}
