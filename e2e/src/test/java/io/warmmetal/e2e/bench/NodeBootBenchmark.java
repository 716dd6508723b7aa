package io.warmmetal.e2e.bench;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.enrollment.AgentProcessTest;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.e2e.Installation;
import io.warmmetal.e2e.cluster.ControlPlane;
import io.warmmetal.e2e.cluster.KubeBinaries;
import io.warmmetal.e2e.cluster.NodeImage;
import io.warmmetal.e2e.cluster.Rack;
import io.warmmetal.e2e.cluster.VirtualServer;
import io.warmmetal.protocol.testing.Await;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Where a server's boot goes, stage by stage, from power-on to warm and on to a pod Running on it:
 * a QEMU server (software emulation) on a rack LAN network-boots the node image from the API —
 * firmware and iPXE, kernel and initrd over HTTP, the layers fetched and checked, systemd, the
 * agent enrolling, the pool's prepare (its steps from the event log) — then a pending pod makes it
 * a node (the real join) and runs on it. Console stages are timed by when their lines appear on the
 * serial console; the rest by the API's event log. One server at a time, so nothing else competes
 * for the host's cores but the control plane and the API. Also the RAM the server's OS uses (total
 * less available, as its kernel counts them) when warm and with the pod running. Prints tables;
 * asserts nothing.
 *
 * <pre>mvn -B -q install -DskipTests && mvn -B -q -pl e2e exec:java -Dexec.classpathScope=test \
 *   -Dexec.mainClass=io.warmmetal.e2e.bench.NodeBootBenchmark -Dexec.args="3 2048 2"</pre>
 *
 * Arguments: runs (default 3), the server's RAM in MiB (2048) and vCPUs (2). Root.
 */
public final class NodeBootBenchmark {
  /** Console lines, in the order a boot prints them: the stage each one ends. */
  private static final Map<String, Pattern> CONSOLE = new LinkedHashMap<>();

  static {
    CONSOLE.put("firmware → iPXE", Pattern.compile("iPXE initialising devices"));
    CONSOLE.put("DHCP, boot script", Pattern.compile("/vmlinuz\\.\\.\\."));
    CONSOLE.put("kernel + initrd fetched", Pattern.compile("initrd\\.img\\.\\.\\. ok"));
    CONSOLE.put("kernel up → initramfs", Pattern.compile("warmmetal: initramfs up"));
    CONSOLE.put("initramfs DHCP", Pattern.compile("warmmetal: network up"));
    CONSOLE.put(
        "layers fetched + checked", Pattern.compile("warmmetal: layer os\\.squashfs ready"));
    CONSOLE.put("root mounted", Pattern.compile("warmmetal: root mounted"));
    CONSOLE.put("systemd → login prompt", Pattern.compile(" login: "));
  }

  private final Vertx vertx = Vertx.vertx();
  private ControlPlane cluster;

  public static void main(String[] args) {
    NodeBootBenchmark b = new NodeBootBenchmark();
    try {
      b.run(
          args.length > 0 ? Integer.parseInt(args[0]) : 3,
          args.length > 1 ? Integer.parseInt(args[1]) : 2048,
          args.length > 2 ? Integer.parseInt(args[2]) : 2);
      b.cluster.close();
      System.exit(0);
    } catch (Throwable t) {
      t.printStackTrace();
      if (b.cluster != null) {
        b.cluster.close();
      }
      System.exit(1);
    }
  }

  private void run(int runs, int memoryMiB, int cpus) throws Exception {
    cluster = ControlPlane.start();
    KubernetesClient kube = cluster.admin();
    Path bootDir = Files.createTempDirectory("warmmetal-boot");
    String image = NodeImage.install(bootDir, AgentProcessTest.AGENT_JAR, null, true);
    JsonObject manifest =
        new JsonObject(Files.readString(bootDir.resolve(image).resolve("image.json")));
    List<Map<String, Long>> results = new ArrayList<>();
    try (ApiFixture fx = ApiFixture.start(vertx, Rack.apiSettings(cluster, bootDir))) {
      try (Rack rack = Rack.forApi(cluster, fx);
          Installation wm =
              Installation.install(
                  cluster,
                  "http://127.0.0.1:" + fx.api.port(),
                  fx.token("client"),
                  pool -> {
                    pool.getSpec().disruption = new NodePool.Disruption();
                    pool.getSpec().disruption.consolidateAfter =
                        "Never"; // the benchmark takes its nodes back itself
                  })) {
        wm.startController();
        for (int i = 0; i < runs; i++) {
          results.add(boot(fx, kube, rack, 100 + i, memoryMiB, cpus));
        }
      }
    }
    List<String> stages = new ArrayList<>(CONSOLE.keySet());
    stages.addAll(
        List.of(
            "agent enrolled",
            "agent connected",
            "prepared → warm",
            "pod → Node Ready",
            "Node Ready → pod Running",
            "RAM used when warm, MiB",
            "RAM used, pod Running, MiB"));
    System.out.printf(
        "%nNode image %s: kernel %.1f MiB, initrd %.1f MiB, layers %s; %.1f MiB transferred at boot%n",
        image,
        mib(manifest.getJsonObject("kernel")),
        mib(manifest.getJsonObject("initrd")),
        manifest.getJsonArray("layers").stream()
            .map(l -> (JsonObject) l)
            .map(l -> String.format("%s %.1f MiB", l.getString("name"), mib(l)))
            .toList(),
        (manifest.getJsonObject("kernel").getLong("size")
                + manifest.getJsonObject("initrd").getLong("size")
                + manifest.getJsonArray("layers").stream()
                    .mapToLong(l -> ((JsonObject) l).getLong("size"))
                    .sum())
            / 1048576.0);
    System.out.printf(
        "QEMU (TCG, %d vCPUs, %d MiB) on %d host cores; ms from power-on (and the stage's own)%n",
        cpus, memoryMiB, Runtime.getRuntime().availableProcessors());
    System.out.printf("%-28s", "stage");
    for (int i = 0; i < results.size(); i++) {
      System.out.printf("%22s", "run " + (i + 1));
    }
    System.out.println();
    for (String stage : stages) {
      System.out.printf("%-28s", stage);
      for (Map<String, Long> r : results) {
        Long at = r.get(stage);
        Long own = r.get(stage + " (own)");
        System.out.printf("%22s", at == null ? "-" : at + (own == null ? "" : " (" + own + ")"));
      }
      System.out.println();
    }
    for (Map<String, Long> r : results) {
      System.out.println(
          "  "
              + r.entrySet().stream()
                  .filter(e -> e.getKey().startsWith("prepare step "))
                  .map(
                      e ->
                          e.getKey().substring("prepare step ".length())
                              + " "
                              + e.getValue()
                              + " ms")
                  .toList());
    }
  }

  private static double mib(JsonObject file) {
    return file.getLong("size") / 1048576.0;
  }

  /** One server: power-on → warm → a pod Running on it → taken back and switched off. */
  private Map<String, Long> boot(
      ApiFixture fx, KubernetesClient kube, Rack rack, int index, int memoryMiB, int cpus)
      throws Exception {
    Map<String, Long> at = new LinkedHashMap<>();
    VirtualServer server = VirtualServer.powerOn(rack, index, memoryMiB, cpus, null);
    long on = System.currentTimeMillis();
    String[] machine = new String[1];
    try {
      // Console lines, as they appear; then the event log, once the machine is warm.
      Await.until(
          "server " + index + " warm",
          () -> {
            server.checkRunning();
            String console = server.console();
            long now = System.currentTimeMillis();
            CONSOLE.forEach(
                (stage, p) -> {
                  if (!at.containsKey(stage) && p.matcher(console).find()) {
                    at.put(stage, now - on);
                  }
                });
            if (machine[0] == null) {
              var rows =
                  fx.db()
                      .preparedQuery("SELECT id FROM machines WHERE system_uuid = $1")
                      .execute(Tuple.of(server.uuid()))
                      .await();
              machine[0] = rows.size() == 1 ? rows.iterator().next().getString("id") : null;
              if (machine[0] != null) {
                fx.client.put(
                    "/v1/pools/"
                        + fx.client
                            .get("/v1/machines/" + machine[0], ApiFixture.ADMIN)
                            .body()
                            .getString("shape"),
                    ApiFixture.ADMIN,
                    new JsonObject().put("minWarm", 1).put("maxWarm", 1));
              }
            }
            return machine[0] != null
                && "warm"
                    .equals(
                        fx.client
                            .get("/v1/machines/" + machine[0], ApiFixture.ADMIN)
                            .body()
                            .getString("state"));
          },
          900_000,
          () -> server.console(40));
      at.put("RAM used when warm, MiB", server.memory(Duration.ofSeconds(30)).usedMiB());
      List<String> steps = new ArrayList<>();
      List<Long> starts = new ArrayList<>();
      for (Row e :
          fx.db()
              .preparedQuery(
                  """
              SELECT type, reason, to_state, (extract(epoch FROM at) * 1000)::bigint AS ms FROM events
              WHERE machine_id = $1 ORDER BY seq""")
              .execute(Tuple.of(machine[0]))
              .await()) {
        long ms = e.getLong("ms") - on;
        String reason = e.getString("reason");
        if ("MachineState".equals(e.getString("type"))
            && "enrolling".equals(e.getString("to_state"))) {
          at.putIfAbsent("agent enrolled", ms);
        } else if ("MachineState".equals(e.getString("type"))
            && "standby".equals(e.getString("to_state"))) {
          at.putIfAbsent("agent connected", ms);
        } else if ("MachineState".equals(e.getString("type"))
            && "warm".equals(e.getString("to_state"))) {
          at.putIfAbsent("prepared → warm", ms);
        } else if ("CommandProgress".equals(e.getString("type"))
            && !at.containsKey("prepared → warm")) {
          steps.add(reason);
          starts.add(ms);
        }
      }
      // The prepare's steps, each until the next began (the last until the machine was warm).
      for (int s = 0; s < steps.size(); s++) {
        long end =
            s + 1 < steps.size()
                ? starts.get(s + 1)
                : at.getOrDefault("prepared → warm", starts.get(s));
        at.put("prepare step " + (s + 1) + " " + steps.get(s), end - starts.get(s));
      }
      // A pending pod: the controller launches it onto the warm server; the real join; the pod
      // Running.
      long created = System.currentTimeMillis();
      String pause = "k8s.gcr.io/pause:" + KubeBinaries.pauseTag();
      Pod pod =
          kube.pods()
              .inNamespace("default")
              .resource(
                  new PodBuilder()
                      .withNewMetadata()
                      .withName("boot-" + index)
                      .endMetadata()
                      .withNewSpec()
                      .addNewContainer()
                      .withName("pause")
                      .withImage(pause)
                      .withImagePullPolicy("Never")
                      .withNewResources()
                      .addToRequests("cpu", new Quantity("100m"))
                      .endResources()
                      .endContainer()
                      .endSpec()
                      .build())
              .create();
      long[] ready = new long[1];
      Await.until(
          "pod " + index + " Running",
          () -> {
            Pod p = kube.pods().inNamespace("default").withName(pod.getMetadata().getName()).get();
            if (ready[0] == 0 && p.getSpec().getNodeName() != null) {
              Node n = kube.nodes().withName(p.getSpec().getNodeName()).get();
              if (n != null
                  && n.getStatus().getConditions().stream()
                      .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()))) {
                ready[0] = System.currentTimeMillis();
              }
            }
            return p.getStatus() != null && "Running".equals(p.getStatus().getPhase());
          },
          600_000,
          () -> server.console(20));
      long running = System.currentTimeMillis();
      at.put("RAM used, pod Running, MiB", server.memory(Duration.ofSeconds(30)).usedMiB());
      at.put("pod → Node Ready", (ready[0] == 0 ? running : ready[0]) - on);
      at.put("pod → Node Ready (own)", (ready[0] == 0 ? running : ready[0]) - created);
      at.put("Node Ready → pod Running", running - on);
      at.put("Node Ready → pod Running (own)", running - (ready[0] == 0 ? running : ready[0]));
      kube.pods()
          .inNamespace("default")
          .withName(pod.getMetadata().getName())
          .withGracePeriod(0)
          .delete();
      kube.resources(NodeClaim.class).delete();
      Await.until(
          "node " + index + " taken back",
          () -> kube.resources(NodeClaim.class).list().getItems().isEmpty(),
          300_000);
    } finally {
      server.close();
    }
    // Each stage's own time: from the one before it that happened.
    Long previous = 0L;
    for (String stage : new ArrayList<>(at.keySet())) {
      if (stage.endsWith("(own)")
          || stage.startsWith("prepare step")
          || stage.startsWith("pod →")
          || stage.startsWith("Node Ready")
          || stage.startsWith("RAM")) {
        continue;
      }
      at.put(stage + " (own)", at.get(stage) - previous);
      previous = at.get(stage);
    }
    System.out.printf("run %d: %s%n", index - 99, at);
    return at;
  }
}
