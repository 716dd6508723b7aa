package io.warmmetal.controller.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import io.fabric8.kubernetes.api.model.Toleration;
import io.fabric8.kubernetes.api.model.TolerationBuilder;
import io.warmmetal.controller.karpenter.Requirement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class SchedulerTest {
  static final long GIB = 1L << 30;
  private final Scheduler scheduler = new Scheduler(Resources.of(100, GIB / 2));

  static InstanceType type(String arch, int cpus, int memGiB, int gpus, double price, int warm) {
    String name =
        (arch.equals("amd64") ? "x86" : "arm")
            + "-"
            + cpus
            + "c-"
            + memGiB
            + "g"
            + (gpus > 0 ? "-" + gpus + "xh100" : "");
    Map<String, String> labels =
        new HashMap<>(
            Map.of(
                "node.kubernetes.io/instance-type",
                name,
                "kubernetes.io/arch",
                arch,
                "karpenter.sh/capacity-type",
                "on-demand",
                "warmmetal.io/cpu",
                String.valueOf(cpus),
                "warmmetal.io/gpu-count",
                String.valueOf(gpus)));
    Resources allocatable = Resources.of(cpus * 1000L, memGiB * GIB);
    if (gpus > 0) {
      allocatable = allocatable.with("nvidia.com/gpu", gpus);
    }
    // Machines to be had: the warm ones, or (a type with none warm) ten being prepared or in
    // standby.
    return new InstanceType(
        name,
        labels,
        allocatable,
        price,
        warm,
        List.of(new InstanceType.Offering(null, null, warm > 0 ? warm : 10, warm)));
  }

  static PodRequest pod(String name, long cpuMilli, long memGiB) {
    return new PodRequest(
        name, Resources.of(cpuMilli, memGiB * GIB), Map.of(), List.of(), List.of());
  }

  static NodePoolView pool(
      String name, int weight, List<Taint> taints, Resources limit, Requirement... reqs) {
    return new NodePoolView(name, weight, Map.of(), List.of(reqs), taints, limit);
  }

  private final List<InstanceType> fleet =
      List.of(
          type("amd64", 8, 32, 0, 0.4, 0),
          type("amd64", 16, 64, 0, 0.8, 5),
          type("amd64", 64, 512, 4, 12.0, 2),
          type("arm64", 16, 64, 0, 0.6, 3));

  @Test
  void aBurstOfMixedPodsPacksOntoFewWarmNodes() {
    List<PodRequest> pods = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      pods.add(i % 4 == 0 ? pod("big-" + i, 2000, 4) : pod("small-" + i, 500, 1));
    }
    Scheduler.Plan plan =
        scheduler.schedule(
            pods,
            List.of(
                pool(
                    "default",
                    0,
                    List.of(),
                    null,
                    new Requirement("kubernetes.io/arch", "In", List.of("amd64")))),
            fleet);
    assertThat(plan.unschedulable()).isEmpty();
    // 25 × 2 cpu + 75 × 0.5 cpu = 87.5 cpu. The five warm 16-cpu machines (15.9 cpu usable each) go
    // first; the rest
    // goes on the cheapest cold type; never on the GPU machines, warm as they are.
    List<String> types = plan.nodes().stream().map(n -> n.type().name()).toList();
    assertThat(types.subList(0, 5)).containsOnly("x86-16c-64g");
    assertThat(types.subList(5, types.size())).containsOnly("x86-8c-32g");
    assertThat(types).doesNotContain("x86-64c-512g-4xh100");
    assertThat(plan.nodes().stream().mapToInt(n -> n.pods().size()).sum()).isEqualTo(100);
    assertThat(plan.nodes())
        .allSatisfy(n -> assertThat(n.free().cpuMilli()).isGreaterThanOrEqualTo(0));
  }

  @Test
  void requirementsOnKeysNoShapeDefinesDoNotRuleShapesOut() {
    // Upstream's general-purpose NodePool asks for AWS instance categories and generations: keys
    // our shapes do not
    // carry. As upstream intersects requirements, only keys both define are compared — arch still
    // decides.
    Scheduler.Plan plan =
        scheduler.schedule(
            List.of(pod("web", 500, 1)),
            List.of(
                pool(
                    "general-purpose",
                    0,
                    List.of(),
                    null,
                    new Requirement(
                        "karpenter.k8s.aws/instance-category", "In", List.of("c", "m", "r")),
                    new Requirement("karpenter.k8s.aws/instance-generation", "Gt", List.of("2")),
                    new Requirement("kubernetes.io/arch", "In", List.of("arm64")))),
            fleet);
    assertThat(plan.unschedulable()).isEmpty();
    assertThat(plan.nodes()).extracting(n -> n.type().name()).containsExactly("arm-16c-64g");
  }

  @Test
  void podsBindingTheSameHostPortGoToDifferentNodes() {
    HostPort http = new HostPort(null, "TCP", 80);
    PodRequest a = pod("ingress-a", 100, 1).withHostPorts(List.of(http));
    PodRequest b = pod("ingress-b", 100, 1).withHostPorts(List.of(http));
    PodRequest udp =
        pod("dns", 100, 1)
            .withHostPorts(List.of(new HostPort("10.0.0.1", "UDP", 80))); // no conflict
    Scheduler.Plan plan =
        scheduler.schedule(List.of(a, b, udp), List.of(pool("default", 0, List.of(), null)), fleet);
    assertThat(plan.unschedulable()).isEmpty();
    assertThat(plan.nodes()).hasSize(2);
    assertThat(plan.nodes())
        .allSatisfy(
            n ->
                assertThat(n.pods().stream().filter(p -> p.name().startsWith("ingress")).count())
                    .isEqualTo(1));

    // A node already there whose pod binds the port takes no second one, whatever room it has.
    Scheduler.PlannedNode there =
        new Scheduler.PlannedNode(
            pool("default", 0, List.of(), null),
            fleet.get(1),
            List.of(a),
            Resources.of(15_000, 60 * GIB));
    Scheduler.Plan next =
        scheduler.schedule(
            List.of(b), List.of(pool("default", 0, List.of(), null)), fleet, List.of(there));
    assertThat(next.nodes()).hasSize(1);
    assertThat(
            new HostPort("127.0.0.1", "TCP", 80)
                .conflictsWith(new HostPort("127.0.0.2", "TCP", 80)))
        .isFalse();
    assertThat(new HostPort("127.0.0.1", "TCP", 80).conflictsWith(http)).isTrue();
  }

  /** A registered node of the 16-core type whose CSI driver can attach ten volumes. */
  private Scheduler.PlannedNode attachingTen() {
    NodePoolView pool = pool("default", 0, List.of(), null);
    return new Scheduler.PlannedNode(
        pool,
        fleet.get(1),
        List.of(),
        Resources.of(16_000, 64 * GIB),
        Scheduler.labels(pool, fleet.get(1)),
        List.of(),
        Map.of("fake.csi.provider", 10));
  }

  @Test
  @DisplayName("Volume Limits: should launch multiple nodes if required due to volume limits")
  void aNodesCsiAttachLimitSendsPodsWhoseVolumesWouldExceedItToANewNode() {
    List<PodRequest> pods = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      pods.add(
          pod("p" + i, 100, 1)
              .withVolumes(
                  Map.of(
                      "fake.csi.provider",
                      Set.of("default/my-claim-a-" + i, "default/my-claim-b-" + i))));
    }
    Scheduler.Plan plan =
        scheduler.schedule(
            pods, List.of(pool("default", 0, List.of(), null)), fleet, List.of(attachingTen()));
    assertThat(plan.onExisting()).as("five pods' ten volumes on the node there").hasSize(5);
    assertThat(plan.nodes()).as("the sixth pod's two more: a new node").hasSize(1);
  }

  @Test
  @DisplayName("Volume Limits: should launch a single node if all pods use the same PVC")
  void podsSharingOneClaimAttachItOnce() {
    List<PodRequest> pods = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      pods.add(
          pod("p" + i, 100, 0)
              .withVolumes(Map.of("fake.csi.provider", Set.of("default/my-claim"))));
    }
    Scheduler.Plan plan =
        scheduler.schedule(
            pods, List.of(pool("default", 0, List.of(), null)), fleet, List.of(attachingTen()));
    assertThat(plan.nodes()).isEmpty();
    assertThat(plan.onExisting()).hasSize(100);
  }

  @Test
  void replicasWithHostnameAntiAffinityGetANodeEach() {
    // Three replicas of an HA Deployment that may not share a node: three nodes, though one would
    // hold them all.
    LabelSelector app = new LabelSelectorBuilder().addToMatchLabels("app", "db").build();
    List<PodRequest> replicas = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      replicas.add(
          pod("db-" + i, 500, 1)
              .withIdentity("prod", Map.of("app", "db"))
              .withAntiAffinity(
                  List.of(new PodAffinityTerm(app, Set.of("prod"), PodAffinityTerm.HOSTNAME))));
    }
    PodRequest other =
        pod("web", 500, 1).withIdentity("prod", Map.of("app", "web")); // not selected: may join one
    PodRequest elsewhere =
        pod("db-other-ns", 500, 1).withIdentity("dev", Map.of("app", "db")); // another namespace
    Scheduler.Plan plan =
        scheduler.schedule(
            List.of(replicas.get(0), replicas.get(1), replicas.get(2), other, elsewhere),
            List.of(pool("default", 0, List.of(), null)),
            fleet);
    assertThat(plan.unschedulable()).isEmpty();
    assertThat(plan.nodes()).hasSize(3);
    assertThat(plan.nodes())
        .allSatisfy(
            n ->
                assertThat(
                        n.pods().stream()
                            .filter(p -> p.name().startsWith("db-") && p.namespace().equals("prod"))
                            .count())
                    .isEqualTo(1));

    // Symmetry: a node already running a replica takes no other, though only the running one has
    // the term.
    Scheduler.PlannedNode there =
        new Scheduler.PlannedNode(
            pool("default", 0, List.of(), null),
            fleet.get(1),
            List.of(replicas.get(0)),
            Resources.of(15_000, 60 * GIB));
    PodRequest plain = pod("db-3", 500, 1).withIdentity("prod", Map.of("app", "db"));
    assertThat(
            scheduler
                .schedule(
                    List.of(plain),
                    List.of(pool("default", 0, List.of(), null)),
                    fleet,
                    List.of(there))
                .nodes())
        .hasSize(1);
  }

  @Test
  void gpuPodsGetGpuNodesAndCheapPodsAvoidThem() {
    PodRequest gpu =
        new PodRequest(
            "train",
            Resources.of(8000, 64 * GIB).with("nvidia.com/gpu", 2),
            Map.of(),
            List.of(),
            List.of());
    Scheduler.Plan plan =
        scheduler.schedule(
            List.of(gpu, pod("web", 500, 1)), List.of(pool("default", 0, List.of(), null)), fleet);
    assertThat(plan.nodes()).extracting(n -> n.type().name()).contains("x86-64c-512g-4xh100");
    // The web pod fits on the GPU node already planned (first fit), so no second node is opened.
    assertThat(plan.nodes()).hasSize(1);
  }

  @Test
  void taintsSelectorsAndAffinityAreRespected() {
    Taint gpuOnly = new TaintBuilder().withKey("gpu").withEffect("NoSchedule").build();
    Toleration tolerateGpu = new TolerationBuilder().withKey("gpu").withOperator("Exists").build();
    NodePoolView tainted = pool("gpu", 100, List.of(gpuOnly), null);
    NodePoolView plain = pool("general", 1, List.of(), null);
    PodRequest tolerant =
        new PodRequest(
            "tolerant", Resources.of(1000, GIB), Map.of(), List.of(), List.of(tolerateGpu));
    PodRequest intolerant = pod("intolerant", 1000, 1);
    PodRequest arm =
        new PodRequest(
            "arm",
            Resources.of(1000, GIB),
            Map.of("kubernetes.io/arch", "arm64"),
            List.of(),
            List.of());
    PodRequest big =
        new PodRequest(
            "big",
            Resources.of(1000, GIB),
            Map.of(),
            List.of(List.of(new Requirement("warmmetal.io/cpu", "Gte", List.of("32")))),
            List.of());

    Scheduler.Plan plan =
        scheduler.schedule(List.of(tolerant, intolerant, arm, big), List.of(tainted, plain), fleet);
    Map<String, String> placed = new HashMap<>();
    plan.nodes()
        .forEach(
            n ->
                n.pods()
                    .forEach(p -> placed.put(p.name(), n.pool().name() + "/" + n.type().name())));
    assertThat(placed.get("tolerant")).startsWith("gpu/"); // the heavier pool first
    assertThat(placed.get("intolerant")).startsWith("general/");
    assertThat(placed.get("arm")).endsWith("arm-16c-64g");
    assertThat(placed.get("big")).endsWith("x86-64c-512g-4xh100");
  }

  @Test
  void limitsCapAPoolAndWarmMachinesWinOverCheaperColdOnes() {
    NodePoolView capped =
        pool(
            "capped",
            0,
            List.of(),
            Resources.of(32_000, 1024 * GIB),
            new Requirement("node.kubernetes.io/instance-type", "In", List.of("x86-16c-64g")));
    List<PodRequest> pods = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      pods.add(pod("p" + i, 15_000, 8));
    }
    Scheduler.Plan plan = scheduler.schedule(pods, List.of(capped), fleet);
    assertThat(plan.nodes()).hasSize(2); // 32 cpu of limit: two 16-cpu nodes
    assertThat(plan.unschedulable()).hasSize(1);

    // The 8-cpu type is cheaper but has no warm machine; the 16-cpu one has: the warm one is
    // chosen.
    Scheduler.Plan warm =
        scheduler.schedule(
            List.of(pod("small", 1000, 1)),
            List.of(
                pool(
                    "any",
                    0,
                    List.of(),
                    null,
                    new Requirement("kubernetes.io/arch", "In", List.of("amd64")))),
            fleet);
    assertThat(warm.nodes().get(0).type().name()).isEqualTo("x86-16c-64g");
  }

  @Test
  void theReserveAndThePodCapCountOnEveryNode() {
    // A pod asking for a whole 8-cpu node does not fit next to the DaemonSets: it needs a bigger
    // one.
    Scheduler.Plan plan =
        scheduler.schedule(
            List.of(pod("whole", 8000, 1)),
            List.of(
                pool(
                    "any",
                    0,
                    List.of(),
                    null,
                    new Requirement("kubernetes.io/arch", "In", List.of("amd64")))),
            List.of(type("amd64", 8, 32, 0, 0.1, 1), type("amd64", 16, 64, 0, 1.0, 1)));
    assertThat(plan.nodes().get(0).type().name()).isEqualTo("x86-16c-64g");

    // A type whose kubelet takes 3 pods: 7 pods need 3 nodes.
    InstanceType three =
        new InstanceType(
            "x86-8c-32g",
            Map.of("node.kubernetes.io/instance-type", "x86-8c-32g"),
            Resources.of(8000, 32 * GIB).with("pods", 3),
            0.1,
            5);
    List<PodRequest> tiny = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      PodRequest p = pod("t" + i, 10, 0);
      tiny.add(
          new PodRequest(p.name(), p.requests().with("pods", 1), Map.of(), List.of(), List.of()));
    }
    assertThat(
            new Scheduler(Resources.NONE)
                .schedule(tiny, List.of(pool("any", 0, List.of(), null)), List.of(three))
                .nodes())
        .hasSize(3);
  }

  @Test
  void aPoolsNodesLimitCapsHowManyNodesItGets() {
    // limits.nodes = 2 (what ClusterState makes of it): each node counts one, whatever its size.
    NodePoolView two =
        new NodePoolView(
            "two",
            0,
            Map.of(),
            List.of(),
            List.of(),
            new Resources(Long.MAX_VALUE / 4, Long.MAX_VALUE / 4, Map.of("nodes", 2L)));
    InstanceType small =
        new InstanceType(
            "x86-8c-32g",
            Map.of("node.kubernetes.io/instance-type", "x86-8c-32g"),
            Resources.of(8000, 32 * GIB).with("nodes", 1),
            0.1,
            5);
    List<PodRequest> pods = List.of(pod("a", 7000, 1), pod("b", 7000, 1), pod("c", 7000, 1));
    Scheduler.Plan plan = scheduler.schedule(pods, List.of(two), List.of(small));
    assertThat(plan.nodes()).hasSize(2);
    assertThat(plan.unschedulable()).extracting(PodRequest::name).containsExactly("c");
  }

  @Test
  void minValuesKeepsAPoolOutUntilEnoughKindsOfNodeWouldDo() {
    Requirement flexible = new Requirement("node.kubernetes.io/instance-type", "Exists", List.of());
    flexible.setMinValues(3);
    NodePoolView pool = pool("flexible", 0, List.of(), null, flexible);
    // The 16-cpu pod fits two types of the fleet (16c and 64c, and the arm 16c: three) — enough.
    assertThat(scheduler.schedule(List.of(pod("p", 15000, 8)), List.of(pool), fleet).nodes())
        .hasSize(1);
    // The 60-cpu pod fits only the 64-cpu type: one kind where three are asked for.
    assertThat(
            scheduler.schedule(List.of(pod("big", 60000, 8)), List.of(pool), fleet).unschedulable())
        .hasSize(1);
    // Under --min-values-policy=BestEffort the pool still gets its node (the claim says so).
    assertThat(
            new Scheduler(Resources.NONE, true)
                .schedule(List.of(pod("big", 60000, 8)), List.of(pool), fleet)
                .nodes())
        .hasSize(1);
    // A key no type defines is not held against them, as requirements are not.
    Requirement foreign = new Requirement("karpenter.k8s.aws/instance-family", "Exists", List.of());
    foreign.setMinValues(5);
    assertThat(
            scheduler
                .schedule(
                    List.of(pod("big", 60000, 8)),
                    List.of(pool("aws", 0, List.of(), null, foreign)),
                    fleet)
                .nodes())
        .hasSize(1);
  }

  @Test
  void theDaemonSetsThatWouldLandOnANodeCountAgainstIt() {
    // A 4-cpu logging agent that tolerates everything, and a GPU plugin only for GPU nodes.
    PodRequest logging =
        new PodRequest(
            "logging",
            Resources.of(4000, GIB),
            Map.of(),
            List.of(),
            List.of(new TolerationBuilder().withOperator("Exists").build()));
    PodRequest gpuPlugin =
        new PodRequest(
            "gpu-plugin",
            Resources.of(2000, GIB),
            Map.of("warmmetal.io/gpu-count", "4"),
            List.of(),
            List.of());
    NodePoolView pool =
        new NodePoolView(
            "x86",
            0,
            Map.of(),
            List.of(new Requirement("kubernetes.io/arch", "In", List.of("amd64"))),
            List.of(),
            null,
            List.of(logging, gpuPlugin));
    assertThat(scheduler.usable(pool, fleet.get(0)).cpuMilli()).isEqualTo(8000 - 100 - 4000);
    assertThat(scheduler.usable(pool, fleet.get(2)).cpuMilli())
        .isEqualTo(64000 - 100 - 4000 - 2000);
    // A 5-cpu pod no longer fits the 8-cpu type beside the logging agent: the 16-cpu one it is.
    assertThat(
            scheduler
                .schedule(List.of(pod("p", 5000, 1)), List.of(pool), fleet)
                .nodes()
                .get(0)
                .type()
                .name())
        .isEqualTo("x86-16c-64g");
  }

  /**
   * A 16-cpu type with machines to be had in racks a and b (two each) and c (one), all in room-1.
   */
  private static InstanceType racked() {
    InstanceType t = type("amd64", 16, 64, 0, 0.8, 5);
    return new InstanceType(
        t.name(),
        t.labels(),
        t.allocatable(),
        t.price(),
        t.warm(),
        List.of(
            new InstanceType.Offering("rack-a", "room-1", 2, 2),
            new InstanceType.Offering("rack-b", "room-1", 2, 2),
            new InstanceType.Offering("rack-c", "room-1", 1, 1)));
  }

  private static PodRequest spreadOverZones(String name) {
    LabelSelector app = new LabelSelectorBuilder().addToMatchLabels("app", "web").build();
    SpreadConstraint spread =
        new SpreadConstraint(
            new PodAffinityTerm(app, Set.of("default"), "topology.kubernetes.io/zone"),
            1,
            null,
            true,
            true,
            false);
    return pod(name, 12000, 8)
        .withIdentity("default", Map.of("app", "web"))
        .withPlacement(new Placement(List.of(), List.of(), List.of(), List.of(), List.of(spread)));
  }

  @Test
  void podsSpreadOverZonesGetNodesInEachZoneWithMachines() {
    Scheduler.Plan plan =
        scheduler.schedule(
            List.of(
                spreadOverZones("w1"),
                spreadOverZones("w2"),
                spreadOverZones("w3"),
                spreadOverZones("w4")),
            List.of(pool("any", 0, List.of(), null)),
            List.of(racked()));
    assertThat(plan.unschedulable()).isEmpty();
    assertThat(plan.nodes())
        .extracting(n -> n.labels().get("topology.kubernetes.io/zone"))
        .containsExactlyInAnyOrder("rack-a", "rack-b", "rack-c", "rack-a");
    assertThat(plan.nodes())
        .allSatisfy(
            n -> assertThat(n.labels()).containsEntry("topology.kubernetes.io/region", "room-1"));
    // A fifth would make rack-a or rack-b two ahead of rack-c, whose one machine is taken: nowhere
    // to go.
    Scheduler.Plan five =
        scheduler.schedule(
            List.of(
                spreadOverZones("w1"),
                spreadOverZones("w2"),
                spreadOverZones("w3"),
                spreadOverZones("w4"),
                spreadOverZones("w5"),
                spreadOverZones("w6")),
            List.of(pool("any", 0, List.of(), null)),
            List.of(racked()));
    assertThat(five.nodes()).hasSize(5);
    assertThat(five.unschedulable()).hasSize(1);
  }

  @Test
  void podsOnANodeNotOursCountForTheSpreadOfNewPods() {
    // Upstream counts every pod in the cluster: two web pods already run in rack-a on a node no
    // NodePool made, so the next two go to the other racks.
    Scheduler.Bystander onPrem =
        new Scheduler.Bystander(
            "on-prem-1",
            Map.of("topology.kubernetes.io/zone", "rack-a", "kubernetes.io/hostname", "on-prem-1"),
            List.of(),
            List.of(spreadOverZones("old1"), spreadOverZones("old2")));
    Scheduler.Plan plan =
        scheduler.schedule(
            List.of(spreadOverZones("w1"), spreadOverZones("w2")),
            List.of(pool("any", 0, List.of(), null)),
            List.of(racked()),
            List.of(),
            List.of(onPrem));
    assertThat(plan.unschedulable()).isEmpty();
    assertThat(plan.nodes())
        .extracting(n -> n.labels().get("topology.kubernetes.io/zone"))
        .containsExactlyInAnyOrder("rack-b", "rack-c");
    assertThat(plan.onExisting()).as("no pod is planned onto a node not ours").isEmpty();
  }

  @Test
  void aPodOnANodeNotOursKeepsPodsItRepelsOutOfItsZone() {
    LabelSelector db = new LabelSelectorBuilder().addToMatchLabels("app", "db").build();
    PodAffinityTerm awayFromDb =
        new PodAffinityTerm(db, Set.of("default"), "topology.kubernetes.io/zone");
    Scheduler.Bystander onPrem =
        new Scheduler.Bystander(
            "on-prem-1",
            Map.of("topology.kubernetes.io/zone", "rack-a"),
            List.of(),
            List.of(pod("db-0", 1000, 1).withIdentity("default", Map.of("app", "db"))));
    PodRequest replica =
        pod("db-1", 1000, 1)
            .withIdentity("default", Map.of("app", "db"))
            .withAntiAffinity(List.of(awayFromDb));
    Scheduler.Plan plan =
        scheduler.schedule(
            List.of(replica),
            List.of(pool("any", 0, List.of(), null)),
            List.of(racked()),
            List.of(),
            List.of(onPrem));
    assertThat(plan.nodes())
        .singleElement()
        .extracting(n -> n.labels().get("topology.kubernetes.io/zone"))
        .isNotEqualTo("rack-a");
  }

  @Test
  void aPendingPodsEffectiveZoneIsTheOneItsRequiredSelectionLeaves() {
    Requirement inAOrB =
        new Requirement("topology.kubernetes.io/zone", "In", List.of("rack-a", "rack-b"));
    Requirement notB = new Requirement("topology.kubernetes.io/zone", "NotIn", List.of("rack-b"));
    Requirement inC = new Requirement("topology.kubernetes.io/zone", "In", List.of("rack-c"));
    assertThat(pod("any", 100, 1).effectiveZone()).isEqualTo("flexible");
    assertThat(
            new PodRequest(
                    "selected",
                    Resources.of(100, GIB),
                    Map.of("topology.kubernetes.io/zone", "rack-a"),
                    List.of(),
                    List.of())
                .effectiveZone())
        .isEqualTo("rack-a");
    assertThat(withTerms(List.of(inAOrB)).effectiveZone()).isEqualTo("flexible");
    assertThat(withTerms(List.of(inAOrB, notB)).effectiveZone()).isEqualTo("rack-a");
    assertThat(withTerms(List.of(inC, notB), List.of(inAOrB, notB)).effectiveZone())
        .as("two terms, each leaving one zone")
        .isEqualTo("flexible");
    assertThat(
            withTerms(
                    List.of(
                        inC,
                        new Requirement("topology.kubernetes.io/zone", "NotIn", List.of("rack-c"))))
                .effectiveZone())
        .isEqualTo("none");
    assertThat(withTerms(List.of(new Requirement("arch", "In", List.of("arm64")))).effectiveZone())
        .as("a term that names no zone")
        .isEqualTo("flexible");
  }

  @SafeVarargs
  private static PodRequest withTerms(List<Requirement>... terms) {
    return new PodRequest("p", Resources.of(100, GIB), Map.of(), List.of(terms), List.of());
  }

  @Test
  void aZoneTheSelectorOrThePoolNamesIsTheZoneTheNodeIsIn() {
    PodRequest inB =
        new PodRequest(
            "b",
            Resources.of(1000, GIB),
            Map.of("topology.kubernetes.io/zone", "rack-b"),
            List.of(),
            List.of());
    Scheduler.Plan plan =
        scheduler.schedule(
            List.of(inB), List.of(pool("any", 0, List.of(), null)), List.of(racked()));
    assertThat(plan.nodes())
        .singleElement()
        .satisfies(
            n -> assertThat(n.labels()).containsEntry("topology.kubernetes.io/zone", "rack-b"));
    NodePoolView onlyC =
        pool(
            "c",
            0,
            List.of(),
            null,
            new Requirement("topology.kubernetes.io/zone", "In", List.of("rack-c")));
    assertThat(
            scheduler
                .schedule(List.of(pod("any", 1000, 1)), List.of(onlyC), List.of(racked()))
                .nodes())
        .singleElement()
        .satisfies(
            n -> assertThat(n.labels()).containsEntry("topology.kubernetes.io/zone", "rack-c"));
    // A zone with no machine to be had is no zone for a node.
    PodRequest inD =
        new PodRequest(
            "d",
            Resources.of(1000, GIB),
            Map.of("topology.kubernetes.io/zone", "rack-d"),
            List.of(),
            List.of());
    assertThat(
            scheduler
                .schedule(List.of(inD), List.of(pool("any", 0, List.of(), null)), List.of(racked()))
                .unschedulable())
        .hasSize(1);
  }

  @Test
  void aResourceAShapeLacksMakesThatShapeUnfitNotThePodStuck() {
    InstanceType disked =
        new InstanceType(
            "x86-16c-64g",
            Map.of("node.kubernetes.io/instance-type", "x86-16c-64g"),
            Resources.of(16000, 64 * GIB).with("ephemeral-storage", 900 * GIB),
            0.8,
            1);
    InstanceType diskless =
        new InstanceType(
            "x86-8c-32g",
            Map.of("node.kubernetes.io/instance-type", "x86-8c-32g"),
            Resources.of(8000, 32 * GIB),
            0.4,
            1);
    PodRequest scratch =
        new PodRequest(
            "scratch",
            Resources.of(1000, GIB).with("ephemeral-storage", 100 * GIB),
            Map.of(),
            List.of(),
            List.of());
    Scheduler.Plan plan =
        scheduler.schedule(
            List.of(scratch), List.of(pool("any", 0, List.of(), null)), List.of(diskless, disked));
    assertThat(plan.nodes()).singleElement().satisfies(n -> assertThat(n.type()).isEqualTo(disked));
    PodRequest huge =
        new PodRequest(
            "huge",
            Resources.of(1000, GIB).with("hugepages-2Mi", 1L << 30),
            Map.of(),
            List.of(),
            List.of());
    assertThat(
            scheduler
                .schedule(
                    List.of(huge),
                    List.of(pool("any", 0, List.of(), null)),
                    List.of(diskless, disked))
                .unschedulable())
        .containsExactly(huge);
  }
}
