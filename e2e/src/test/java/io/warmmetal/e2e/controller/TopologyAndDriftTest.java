package io.warmmetal.e2e.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.TopologySelectorTermBuilder;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.e2e.Cleaner;
import io.warmmetal.e2e.cluster.ControlPlane;
import io.warmmetal.e2e.cluster.RealCluster;
import io.warmmetal.protocol.testing.Await;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Zones and drift on the real control plane: racks as zones (a node class naming the machines' rack
 * label), a Deployment spread over them gets a node in each rack; a NodePool whose template changes
 * drifts its node, which is replaced — the new node up before the old one drains — and the
 * Deployment's pod moves to it.
 */
@ExtendWith({VertxExtension.class, RealCluster.class})
@Tag("cluster")
class TopologyAndDriftTest {
  private static final String RACK = "warmmetal.io/rack";
  private Fleet cluster;
  private KubernetesClient kube;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static JsonObject rack(String name) {
    return new JsonObject().put(RACK, name);
  }

  private static Deployment deployment(
      String name, int replicas, String cpu, boolean spreadOverZones) {
    var template =
        new DeploymentBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace("default")
            .endMetadata()
            .withNewSpec()
            .withReplicas(replicas)
            .withNewSelector()
            .addToMatchLabels("app", name)
            .endSelector()
            .withNewTemplate()
            .withNewMetadata()
            .addToLabels("app", name)
            .endMetadata()
            .withNewSpec()
            .withTerminationGracePeriodSeconds(0L)
            .addNewContainer()
            .withName("app")
            .withImage("busybox")
            .withNewResources()
            .addToRequests("cpu", new Quantity(cpu))
            .addToRequests("memory", new Quantity("1Gi"))
            .endResources()
            .endContainer();
    if (spreadOverZones) {
      template =
          template
              .addNewTopologySpreadConstraint()
              .withMaxSkew(1)
              .withTopologyKey("topology.kubernetes.io/zone")
              .withWhenUnsatisfiable("DoNotSchedule")
              .withNewLabelSelector()
              .addToMatchLabels("app", name)
              .endLabelSelector()
              .endTopologySpreadConstraint();
    }
    return template.endSpec().endTemplate().endSpec().build();
  }

  private List<Pod> pods(String app) {
    return kube.pods().inNamespace("default").withLabel("app", app).list().getItems();
  }

  private static void neverConsolidate(NodePool pool) {
    pool.getSpec().disruption = new NodePool.Disruption();
    pool.getSpec().disruption.consolidateAfter = "Never";
  }

  /** A volume on a disk of one rack, for the claim of that name (or any, of the class). */
  private PersistentVolume rackDisk(String name, String zone, String storageClass, String claim) {
    PersistentVolumeBuilder volume =
        new PersistentVolumeBuilder()
            .withNewMetadata()
            .withName(name)
            .withLabels(Map.of(Cleaner.TEST_LABEL, "true"))
            .endMetadata()
            .withNewSpec()
            .withCapacity(Map.of("storage", new Quantity("1Gi")))
            .withAccessModes("ReadWriteOnce")
            .withStorageClassName(storageClass)
            .withNewHostPath()
            .withPath("/var/lib/" + name)
            .endHostPath()
            .withNewNodeAffinity()
            .withNewRequired()
            .addNewNodeSelectorTerm()
            .addNewMatchExpression()
            .withKey("topology.kubernetes.io/zone")
            .withOperator("In")
            .withValues(zone)
            .endMatchExpression()
            .endNodeSelectorTerm()
            .endRequired()
            .endNodeAffinity()
            .endSpec();
    if (claim != null) {
      volume
          .editSpec()
          .withNewClaimRef()
          .withNamespace("default")
          .withName(claim)
          .endClaimRef()
          .endSpec();
    }
    return kube.persistentVolumes().resource(volume.build()).create();
  }

  private void volumeClaim(String name, String storageClass, String volume) {
    kube.persistentVolumeClaims()
        .inNamespace("default")
        .resource(
            new PersistentVolumeClaimBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace("default")
                .endMetadata()
                .withNewSpec()
                .withAccessModes("ReadWriteOnce")
                .withStorageClassName(storageClass)
                .withVolumeName(volume)
                .withNewResources()
                .addToRequests("storage", new Quantity("1Gi"))
                .endResources()
                .endSpec()
                .build())
        .create();
  }

  private static Pod using(Pod pod, String claim) {
    pod.getSpec()
        .setVolumes(
            List.of(
                new VolumeBuilder()
                    .withName("data")
                    .withNewPersistentVolumeClaim()
                    .withClaimName(claim)
                    .endPersistentVolumeClaim()
                    .build()));
    return pod;
  }

  @Test
  void podsGetNodesInTheRacksTheirVolumesAreIn(Vertx vertx, ControlPlane controlPlane)
      throws Exception {
    cluster =
        Fleet.start(
            vertx,
            controlPlane,
            List.of(rack("r1"), rack("r2"), rack("r3")),
            TopologyAndDriftTest::neverConsolidate,
            nodeClass -> nodeClass.getSpec().zoneLabel = RACK);
    kube = cluster.kube;
    // A claim bound to a volume on a disk in rack r2 (its node affinity says so).
    rackDisk("r2-disk", "r2", "manual", "data");
    volumeClaim("data", "manual", "r2-disk");
    // kube-scheduler holds a pod whose (immediately bound) claim is not Bound yet; the binder
    // binds it within its sync period.
    Await.until(
        "the claim bound to its volume",
        () ->
            "Bound"
                .equals(
                    kube.persistentVolumeClaims()
                        .inNamespace("default")
                        .withName("data")
                        .get()
                        .getStatus()
                        .getPhase()),
        60_000);
    // A claim of a WaitForFirstConsumer class that only rack r3 serves (its allowed topologies):
    // bound when its pod is placed.
    kube.storage()
        .v1()
        .storageClasses()
        .resource(
            new StorageClassBuilder()
                .withNewMetadata()
                .withName("r3-only")
                .withLabels(Map.of(Cleaner.TEST_LABEL, "true"))
                .endMetadata()
                .withProvisioner("kubernetes.io/no-provisioner")
                .withVolumeBindingMode("WaitForFirstConsumer")
                .withAllowedTopologies(
                    new TopologySelectorTermBuilder()
                        .addNewMatchLabelExpression()
                        .withKey("topology.kubernetes.io/zone")
                        .withValues("r3")
                        .endMatchLabelExpression()
                        .build())
                .build())
        .create();
    rackDisk("r3-disk", "r3", "r3-only", null);
    volumeClaim("scratch", "r3-only", null);

    // Two small pods would share one node in any rack; their volumes put them in r2 and r3.
    cluster.create(using(Fleet.pod("db", "1"), "data"));
    cluster.create(using(Fleet.pod("cache", "1"), "scratch"));
    for (String[] pod : List.of(new String[] {"db", "r2"}, new String[] {"cache", "r3"})) {
      String node = cluster.awaitScheduled(pod[0]);
      NodeClaim claim = cluster.claimOf(node);
      assertThat(claim.getMetadata().getLabels())
          .as(pod[0])
          .containsEntry("topology.kubernetes.io/zone", pod[1]);
    }
    assertThat(cluster.claims()).hasSize(2);
  }

  @Test
  void aDeploymentSpreadOverRacksGetsANodeInEachRack(Vertx vertx, ControlPlane controlPlane)
      throws Exception {
    // Two machines in each of three racks; the node class says the rack label is the zone.
    cluster =
        Fleet.start(
            vertx,
            controlPlane,
            List.of(rack("r1"), rack("r1"), rack("r2"), rack("r2"), rack("r3"), rack("r3")),
            TopologyAndDriftTest::neverConsolidate,
            nodeClass -> nodeClass.getSpec().zoneLabel = RACK);
    kube = cluster.kube;
    // Three replicas of 2 cpu would share one 16-cpu node; spread over zones they need one node per
    // rack.
    kube.apps()
        .deployments()
        .inNamespace("default")
        .resource(deployment("spread", 3, "2", true))
        .create();

    Await.until("three nodes", () -> cluster.initialized().size() == 3, 60_000);
    List<NodeClaim> claims = cluster.initialized();
    assertThat(claims)
        .extracting(c -> c.getMetadata().getLabels().get("topology.kubernetes.io/zone"))
        .containsExactlyInAnyOrder("r1", "r2", "r3");
    // Each launched on a machine of its rack, and its Node labelled with it.
    for (NodeClaim claim : claims) {
      String zone = claim.getMetadata().getLabels().get("topology.kubernetes.io/zone");
      assertThat(claim.getSpec().requirements)
          .anySatisfy(
              r -> {
                assertThat(r.getKey()).isEqualTo("topology.kubernetes.io/zone");
                assertThat(r.getValues()).containsExactly(zone);
              });
      Node node = kube.nodes().withName(claim.getStatus().nodeName).get();
      assertThat(node.getMetadata().getLabels()).containsEntry("topology.kubernetes.io/zone", zone);
      String machine = claim.getStatus().providerID.substring("warmmetal://".length());
      assertThat(
              cluster.fx.count(
                  "SELECT count(*) FROM machines WHERE id = $1 AND labels ->> '"
                      + RACK
                      + "' = '"
                      + zone
                      + "'",
                  machine))
          .isEqualTo(1);
    }
    Await.until(
        "all three pods running",
        () ->
            pods("spread").stream()
                    .filter(
                        p -> p.getStatus() != null && "Running".equals(p.getStatus().getPhase()))
                    .count()
                == 3);
  }

  @Test
  void aDriftedNodeIsReplacedBeforeItIsDrained(Vertx vertx, ControlPlane controlPlane)
      throws Exception {
    cluster = Fleet.start(vertx, controlPlane, 2, TopologyAndDriftTest::neverConsolidate);
    kube = cluster.kube;
    kube.apps()
        .deployments()
        .inNamespace("default")
        .resource(deployment("web", 1, "2", false))
        .create();
    Await.until(
        "the pod running",
        () ->
            pods("web").stream()
                .anyMatch(
                    p -> p.getStatus() != null && "Running".equals(p.getStatus().getPhase())));
    String oldNode = pods("web").get(0).getSpec().getNodeName();
    NodeClaim old = cluster.claimOf(oldNode);

    cluster.updatePool(pool -> pool.getSpec().template.metadata.labels = Map.of("team", "search"));
    Await.until(
        "the node drifted",
        () -> {
          NodeClaim c = kube.resources(NodeClaim.class).withName(old.getMetadata().getName()).get();
          return c != null
              && c.getStatus() != null
              && Conditions.isTrue(c.getStatus().conditions, Conditions.DRIFTED);
        });
    assertThat(
            Conditions.get(
                    kube.resources(NodeClaim.class)
                        .withName(old.getMetadata().getName())
                        .get()
                        .getStatus()
                        .conditions,
                    Conditions.DRIFTED)
                .getReason())
        .isEqualTo("NodePoolDrifted");

    // The replacement comes up while the old node still runs the pod (tainted: nothing new lands
    // there).
    Await.until(
        "a replacement initialized beside the old node",
        () ->
            cluster.initialized().stream()
                .anyMatch(c -> !c.getMetadata().getName().equals(old.getMetadata().getName())),
        60_000);
    NodeClaim replacement =
        cluster.initialized().stream()
            .filter(c -> !c.getMetadata().getName().equals(old.getMetadata().getName()))
            .findFirst()
            .orElseThrow();
    assertThat(replacement.getMetadata().getLabels()).containsEntry("team", "search");

    Await.until(
        "the old node drained and gone",
        () ->
            kube.nodes().withName(oldNode).get() == null
                && kube.resources(NodeClaim.class).withName(old.getMetadata().getName()).get()
                    == null,
        60_000);
    Await.until(
        "the pod running on the replacement",
        () ->
            pods("web").stream()
                .anyMatch(
                    p ->
                        p.getStatus() != null
                            && "Running".equals(p.getStatus().getPhase())
                            && replacement.getStatus().nodeName.equals(p.getSpec().getNodeName())));
    Set<String> left =
        cluster.claims().stream().map(c -> c.getMetadata().getName()).collect(Collectors.toSet());
    assertThat(left).containsExactly(replacement.getMetadata().getName());
  }

  @Test
  void aStaticNodePoolKeepsItsReplicasWhateverThePods(Vertx vertx, ControlPlane controlPlane)
      throws Exception {
    cluster = Fleet.start(vertx, controlPlane, 3, pool -> pool.getSpec().replicas = 2L);
    kube = cluster.kube;
    Await.until("two nodes with no pod asking", () -> cluster.initialized().size() == 2, 60_000);
    // A pod lands on one of them; one too big for what is left makes the static pool launch
    // nothing.
    kube.apps()
        .deployments()
        .inNamespace("default")
        .resource(deployment("small", 1, "2", false))
        .create();
    Await.until(
        "the pod running",
        () ->
            pods("small").stream()
                .anyMatch(
                    p -> p.getStatus() != null && "Running".equals(p.getStatus().getPhase())));
    kube.apps()
        .deployments()
        .inNamespace("default")
        .resource(deployment("huge", 1, "15", false))
        .create();
    Await.until(
        "the controller finds the huge pod no node",
        () ->
            pods("huge").stream()
                .anyMatch(
                    p ->
                        cluster.controllerEvent("FailedScheduling", p.getMetadata().getName())
                            || p.getSpec().getNodeName() != null));
    cluster.awaitPasses(3);
    assertThat(cluster.claims()).hasSize(2);

    cluster.updatePool(pool -> pool.getSpec().replicas = 1L);
    Await.until("scaled down to one", () -> cluster.claims().size() == 1, 60_000);
    assertThat(cluster.fx.count("SELECT count(*) FROM instances WHERE state = 'running'"))
        .isEqualTo(1);
  }

  @Test
  void anUnderutilizedNodeIsReplacedByACheaperOneBeforeItDrains(
      Vertx vertx, ControlPlane controlPlane) throws Exception {
    cluster =
        Fleet.start(
            vertx,
            controlPlane,
            1,
            pool -> {
              pool.getSpec().disruption = new NodePool.Disruption();
              pool.getSpec().disruption.consolidationPolicy = "WhenEmptyOrUnderutilized";
              pool.getSpec().disruption.consolidateAfter = "1s";
            });
    kube = cluster.kube;
    // The 16-cpu machine is the only one when a 12-cpu pod comes; an 8-cpu one (cheaper) is
    // enrolled afterwards.
    kube.apps()
        .deployments()
        .inNamespace("default")
        .resource(deployment("app", 1, "12", false))
        .create();
    Await.until(
        "the pod running",
        () ->
            pods("app").stream()
                .anyMatch(
                    p -> p.getStatus() != null && "Running".equals(p.getStatus().getPhase())));
    NodeClaim big = cluster.claimOf(pods("app").get(0).getSpec().getNodeName());
    cluster.addAgents(vertx, 1, ApiFixture.facts(8, 32), "sim-small-", true, Fleet.RACK_1);
    cluster.fx.client.put(
        "/v1/pools/x86-8c-32g",
        ApiFixture.ADMIN,
        new JsonObject().put("minWarm", 1).put("maxWarm", 1));
    Await.until(
        "the small machine warm",
        () ->
            cluster.fx.count(
                    "SELECT count(*) FROM machines WHERE shape = 'x86-8c-32g' AND state = 'warm'")
                == 1);

    // The app now asks for 2 cpu: its new pod fits the 16-cpu node, which an 8-cpu node would hold
    // for less.
    kube.apps()
        .deployments()
        .inNamespace("default")
        .withName("app")
        .edit(
            d -> {
              d.getSpec()
                  .getTemplate()
                  .getSpec()
                  .getContainers()
                  .get(0)
                  .getResources()
                  .getRequests()
                  .put("cpu", new Quantity("2"));
              return d;
            });
    Await.until(
        "a cheaper replacement up beside the old node",
        () ->
            cluster.initialized().stream()
                .anyMatch(
                    c ->
                        "x86-8c-32g"
                            .equals(
                                c.getMetadata()
                                    .getLabels()
                                    .get("node.kubernetes.io/instance-type"))),
        60_000);
    Await.until(
        "the 16-cpu node gone, its pod on the 8-cpu node",
        () ->
            kube.resources(NodeClaim.class).withName(big.getMetadata().getName()).get() == null
                && pods("app").stream()
                    .anyMatch(
                        p ->
                            p.getStatus() != null
                                && "Running".equals(p.getStatus().getPhase())
                                && cluster.claimOf(p.getSpec().getNodeName()) != null
                                && "x86-8c-32g"
                                    .equals(
                                        cluster
                                            .claimOf(p.getSpec().getNodeName())
                                            .getMetadata()
                                            .getLabels()
                                            .get("node.kubernetes.io/instance-type"))),
        60_000);
    assertThat(cluster.metrics.scrape())
        .contains(
            "karpenter_voluntary_disruption_decisions_total{consolidation_type="
                + "\"single\",decision=\"replace\",reason=\"underutilized\",} 1.0");
  }
}
