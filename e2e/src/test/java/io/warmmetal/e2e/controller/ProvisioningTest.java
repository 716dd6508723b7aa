package io.warmmetal.e2e.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.AffinityBuilder;
import io.fabric8.kubernetes.api.model.ContainerPortBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import io.fabric8.kubernetes.api.model.Toleration;
import io.fabric8.kubernetes.api.model.TolerationBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.provisioning.PodNudges;
import io.warmmetal.e2e.cluster.ControlPlane;
import io.warmmetal.e2e.cluster.RealCluster;
import io.warmmetal.protocol.testing.Await;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Pending pod → Node Ready, end to end on a real control plane: kube-scheduler finds a pod no node,
 * the real controller (as its ServiceAccount) launches through the real WarmMetal API on
 * PostgreSQL, simulated agents' kubelets register the Nodes, and kube-scheduler binds the pod
 * there.
 */
@ExtendWith({VertxExtension.class, RealCluster.class})
@Tag("cluster")
class ProvisioningTest {
  private KubernetesClient kube;
  private Fleet cluster;
  private ApiFixture fx;

  @BeforeEach
  void start(Vertx vertx, ControlPlane controlPlane) throws Exception {
    cluster = Fleet.start(vertx, controlPlane, 3, pool -> {});
    fx = cluster.fx;
    kube = cluster.kube;
  }

  @AfterEach
  void stop() {
    cluster.close();
  }

  private static Pod pending(String name, String cpu) {
    return Fleet.pod(name, cpu);
  }

  @Test
  void aPendingPodBecomesAReadyNodeFromTheWarmPool() throws Exception {
    kube.pods().inNamespace("default").resource(pending("web-1", "2")).create();

    Await.until(
        "a NodeClaim initialized",
        () ->
            kube.resources(NodeClaim.class).list().getItems().stream()
                .anyMatch(
                    c ->
                        c.getStatus() != null
                            && Conditions.isTrue(
                                c.getStatus().conditions, Conditions.INITIALIZED)));
    List<NodeClaim> claims = kube.resources(NodeClaim.class).list().getItems();
    assertThat(claims).hasSize(1);
    NodeClaim claim = claims.get(0);
    assertThat(Conditions.isTrue(claim.getStatus().conditions, Conditions.LAUNCHED)).isTrue();
    assertThat(Conditions.isTrue(claim.getStatus().conditions, Conditions.REGISTERED)).isTrue();
    assertThat(claim.getStatus().providerID).startsWith("warmmetal://m-");

    Node node = kube.nodes().withName(claim.getStatus().nodeName).get();
    assertThat(node.getSpec().getProviderID()).isEqualTo(claim.getStatus().providerID);
    assertThat(node.getMetadata().getLabels())
        .containsEntry("karpenter.sh/nodepool", "default")
        .containsEntry("team", "ml")
        .containsEntry("node.kubernetes.io/instance-type", "x86-16c-64g")
        .containsEntry("karpenter.sh/capacity-type", "on-demand")
        .containsEntry("karpenter.sh/registered", "true")
        .containsEntry("karpenter.sh/initialized", "true");
    assertThat(claim.getMetadata().getLabels())
        .containsEntry("team", "ml") // the template's, as Karpenter copies
        .containsEntry("karpenter.sh/capacity-type", "on-demand");
    assertThat(node.getSpec().getTaints())
        .noneMatch(t -> t.getKey().equals("karpenter.sh/unregistered"));

    // The launch used the NodeClaim's UID as client token: the API holds exactly one instance for
    // it.
    assertThat(
            fx.count(
                "SELECT count(*) FROM launches WHERE client_token = $1",
                claim.getMetadata().getUid()))
        .isEqualTo(1);
    // The Node can register before the join's result reaches the API (a kubelet does not wait for
    // kubeadm to exit).
    Await.until(
        "the instance running",
        () -> fx.count("SELECT count(*) FROM instances WHERE state = 'running'") == 1);
    // kube-scheduler bound the pod to the new node, and its kubelet runs it.
    assertThat(cluster.awaitScheduled("web-1")).isEqualTo(node.getMetadata().getName());

    // Owned by its NodePool, as upstream's: deleting the NodePool takes its nodes (drained first)
    // with it.
    assertThat(claim.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(
            o -> {
              assertThat(o.getKind() + "/" + o.getName()).isEqualTo("NodePool/default");
              assertThat(o.getBlockOwnerDeletion()).isTrue();
            });
    kube.resources(NodePool.class).withName("default").delete();
    Await.until(
        "the NodePool's node gone with it",
        () ->
            kube.resources(NodeClaim.class).list().getItems().isEmpty()
                && kube.nodes().withName(node.getMetadata().getName()).get() == null,
        60_000);
    Await.until(
        "its instance terminated",
        () -> fx.count("SELECT count(*) FROM instances WHERE state = 'running'") == 0);
  }

  @Test
  void aPendingPodIsTouchedWhenItsNodeIsInitializedAndAtMostThreeTimes() throws Exception {
    // A pod no scheduler serves stays pending whatever kube-scheduler does, so every touch the
    // controller gives it shows here (a pod kube-scheduler binds first would need none); it is
    // marked unschedulable as kube-scheduler marks a pod it cannot place.
    Pod held = pending("held-1", "2");
    held.getSpec().setSchedulerName("no-scheduler");
    cluster.create(held);
    kube.pods()
        .inNamespace("default")
        .withName("held-1")
        .editStatus(
            p -> {
              p.getStatus()
                  .getConditions()
                  .add(
                      new PodConditionBuilder()
                          .withType("PodScheduled")
                          .withStatus("False")
                          .withReason("Unschedulable")
                          .build());
              return p;
            });

    Await.until(
        "the pod touched for its initialized node",
        () -> {
          Pod p = kube.pods().inNamespace("default").withName("held-1").get();
          return p.getMetadata().getAnnotations() != null
              && p.getMetadata().getAnnotations().containsKey(PodNudges.ANNOTATION);
        });
    NodeClaim claim = cluster.claims().get(0);
    assertThat(Conditions.isTrue(claim.getStatus().conditions, Conditions.INITIALIZED)).isTrue();
    assertThat(
            kube.pods()
                .inNamespace("default")
                .withName("held-1")
                .get()
                .getMetadata()
                .getAnnotations()
                .get(PodNudges.ANNOTATION))
        .startsWith(claim.getStatus().nodeName + "@");
    // Passes a second apart touch it again, three times in all, then never more.
    Await.until(
        "three touches",
        () -> {
          cluster.trigger();
          return nudges() == 3.0;
        });
    long later = System.currentTimeMillis() + 2_500;
    while (System.currentTimeMillis() < later) {
      cluster.awaitPasses(1);
    }
    assertThat(nudges()).as("touches after 2.5 s more of passes").isEqualTo(3.0);
  }

  /** The controller's count of pods touched, from its metrics. */
  private double nudges() {
    return cluster
        .metrics
        .scrape()
        .lines()
        .filter(l -> l.startsWith("warmmetal_pods_nudged_total{nodepool=\"default\",}"))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
        .sum();
  }

  @Test
  void withOnlyStandbyMachinesAPodStillGetsANodeOnceOneIsPrepared() throws Exception {
    // The pool keeps nothing warm: all three machines go to standby.
    fx.client.put(
        "/v1/pools/" + Fleet.SHAPE,
        ApiFixture.ADMIN,
        new JsonObject().put("minWarm", 0).put("maxWarm", 0));
    Await.until(
        "all standby",
        () -> fx.count("SELECT count(*) FROM machines WHERE state = 'standby'") == 3);
    kube.pods().inNamespace("default").resource(pending("batch-1", "2")).create();

    Await.until("a node", () -> kube.nodes().list().getItems().size() == 1, 60_000);
    Await.until(
        "its instance running",
        () -> fx.count("SELECT count(*) FROM instances WHERE state = 'running'") == 1);
    assertThat(
            fx.count(
                "SELECT count(*) FROM events WHERE type = 'MachineState' AND reason = 'claimed from standby'"))
        .isEqualTo(1);
  }

  @Test
  void aNodeClassCanKeepLaunchesOffTheStandbyTier() throws Exception {
    Fleet.retrying(
        () ->
            kube.resources(WarmMetalNodeClass.class)
                .withName("default")
                .edit(
                    c -> {
                      c.getSpec().launchFromStandby = false;
                      return c;
                    }));
    fx.client.put(
        "/v1/pools/" + Fleet.SHAPE,
        ApiFixture.ADMIN,
        new JsonObject().put("minWarm", 0).put("maxWarm", 0));
    Await.until(
        "all standby",
        () -> fx.count("SELECT count(*) FROM machines WHERE state = 'standby'") == 3);
    kube.pods().inNamespace("default").resource(pending("stateless-1", "2")).create();
    // The controller plans the pod and finds no shape with a machine it may take; three passes
    // later, still none.
    cluster.awaitDecided("stateless-1");
    cluster.awaitPasses(3);
    assertThat(fx.count("SELECT count(*) FROM instances")).isZero();
    assertThat(kube.nodes().list().getItems()).isEmpty();

    // Allowed again: the pod gets a node from standby.
    Fleet.retrying(
        () ->
            kube.resources(WarmMetalNodeClass.class)
                .withName("default")
                .edit(
                    c -> {
                      c.getSpec().launchFromStandby = null;
                      return c;
                    }));
    Await.until("a node", () -> kube.nodes().list().getItems().size() == 1, 60_000);
  }

  @Test
  void aBurstOfPodsGetsTheRightNumberOfNodes() throws Exception {
    for (int i = 0; i < 20; i++) {
      kube.pods().inNamespace("default").resource(pending("batch-" + i, "1500m")).create();
    }
    // 20 × 1.5 cpu = 30 cpu; a 16-cpu node holds 10 such pods next to its DaemonSets: 2 nodes, not
    // 20.
    Await.until(
        "two NodeClaims initialized",
        () ->
            kube.resources(NodeClaim.class).list().getItems().stream()
                    .filter(
                        c ->
                            c.getStatus() != null
                                && Conditions.isTrue(
                                    c.getStatus().conditions, Conditions.INITIALIZED))
                    .count()
                == 2);
    cluster.awaitPasses(3); // nothing more follows
    assertThat(kube.resources(NodeClaim.class).list().getItems()).hasSize(2);
    assertThat(fx.count("SELECT count(*) FROM instances")).isEqualTo(2);
  }

  @Test
  void podsBindingTheSameHostPortGetANodeEach() throws Exception {
    for (String name : List.of("ingress-0", "ingress-1")) {
      Pod pod = pending(name, "1");
      pod.getSpec()
          .getContainers()
          .get(0)
          .setPorts(
              List.of(
                  new ContainerPortBuilder().withContainerPort(8080).withHostPort(8080).build()));
      kube.pods().inNamespace("default").resource(pod).create();
    }
    // Two 1-cpu pods would share one 16-cpu node, but not its port 8080: kube-scheduler places them
    // apart.
    String first = cluster.awaitScheduled("ingress-0");
    String second = cluster.awaitScheduled("ingress-1");
    assertThat(first).isNotEqualTo(second);
    cluster.awaitPasses(3); // nothing more follows
    assertThat(cluster.claims()).hasSize(2);
  }

  @Test
  void anHaDeploymentWithHostnameAntiAffinityGetsThreeNodesAndAllItsPodsRun() throws Exception {
    Map<String, String> app = Map.of("app", "db");
    kube.apps()
        .deployments()
        .inNamespace("default")
        .resource(
            new DeploymentBuilder()
                .withNewMetadata()
                .withName("db")
                .withNamespace("default")
                .endMetadata()
                .withNewSpec()
                .withReplicas(3)
                .withNewSelector()
                .withMatchLabels(app)
                .endSelector()
                .withNewTemplate()
                .withNewMetadata()
                .withLabels(app)
                .endMetadata()
                .withSpec(pending("template", "500m").getSpec())
                .editSpec()
                .withNewAffinity()
                .withNewPodAntiAffinity()
                .addNewRequiredDuringSchedulingIgnoredDuringExecution()
                .withNewLabelSelector()
                .withMatchLabels(app)
                .endLabelSelector()
                .withTopologyKey("kubernetes.io/hostname")
                .endRequiredDuringSchedulingIgnoredDuringExecution()
                .endPodAntiAffinity()
                .endAffinity()
                .endSpec()
                .endTemplate()
                .endSpec()
                .build())
        .create();

    Await.until(
        "three db pods running",
        () ->
            kube.pods().inNamespace("default").withLabels(app).list().getItems().stream()
                    .filter(
                        p -> p.getStatus() != null && "Running".equals(p.getStatus().getPhase()))
                    .count()
                == 3,
        60_000);
    List<String> nodes =
        kube.pods().inNamespace("default").withLabels(app).list().getItems().stream()
            .map(p -> p.getSpec().getNodeName())
            .distinct()
            .toList();
    assertThat(nodes)
        .hasSize(3); // one node each, as kube-scheduler requires: not one node and two pods pending
    assertThat(cluster.claims()).hasSize(3);
  }

  @Test
  void aControllerThatLostItsLaunchRecordLaunchesNothingTwice() throws Exception {
    kube.pods().inNamespace("default").resource(pending("web-2", "1")).create();
    Await.until(
        "launched",
        () ->
            kube.resources(NodeClaim.class).list().getItems().stream()
                .anyMatch(
                    c ->
                        c.getStatus() != null
                            && Conditions.isTrue(c.getStatus().conditions, Conditions.LAUNCHED)));
    // A controller that crashed after the API launched but before it recorded so: the claim looks
    // unlaunched. The
    // controller keeps no launch state in memory, so the next pass sees what a restarted controller
    // would.
    NodeClaim claim = kube.resources(NodeClaim.class).list().getItems().get(0);
    String provider = claim.getStatus().providerID;
    Fleet.retrying(
        () -> {
          NodeClaim latest =
              kube.resources(NodeClaim.class).withName(claim.getMetadata().getName()).get();
          latest.getStatus().conditions.clear();
          latest.getStatus().providerID = null;
          kube.resources(NodeClaim.class).resource(latest).updateStatus();
        });
    cluster.trigger();
    Await.until(
        "launched again",
        () -> {
          NodeClaim c =
              kube.resources(NodeClaim.class).withName(claim.getMetadata().getName()).get();
          return c.getStatus() != null
              && Conditions.isTrue(c.getStatus().conditions, Conditions.LAUNCHED);
        });
    NodeClaim relaunched =
        kube.resources(NodeClaim.class).withName(claim.getMetadata().getName()).get();
    assertThat(relaunched.getStatus().providerID)
        .isEqualTo(provider); // the same instance, replayed by its token
    assertThat(fx.count("SELECT count(*) FROM instances")).isEqualTo(1);
  }

  private List<NodeClaim> claims() {
    return kube.resources(NodeClaim.class).list().getItems();
  }

  private static long withCondition(List<NodeClaim> claims, String condition) {
    return claims.stream()
        .filter(
            c -> c.getStatus() != null && Conditions.isTrue(c.getStatus().conditions, condition))
        .count();
  }

  @Test
  void aFleetOutageMidBurstKeepsEveryClaimAndLaunchesEachOnceWhenItIsBack() throws Exception {
    kube.pods().inNamespace("default").resource(pending("first", "12")).create();
    Await.until("the first launched", () -> withCondition(claims(), Conditions.LAUNCHED) == 1);
    // The API's database goes: it answers every launch 503 ServiceUnavailable with Retry-After.
    cluster.database.cut();
    List<String> names;
    try {
      kube.pods().inNamespace("default").resource(pending("second", "12")).create();
      kube.pods().inNamespace("default").resource(pending("third", "12")).create();
      Await.until("a NodeClaim for each pod", () -> claims().size() == 3);
      cluster.awaitPasses(3); // their launches tried, and answered 503, more than once
      List<NodeClaim> during = claims();
      assertThat(during).as("no claim given up as if out of capacity").hasSize(3);
      assertThat(withCondition(during, Conditions.LAUNCHED)).isEqualTo(1);
      names = during.stream().map(c -> c.getMetadata().getName()).sorted().toList();
    } finally {
      cluster.database.restore();
    }
    Await.until(
        "all three initialized", () -> withCondition(claims(), Conditions.INITIALIZED) == 3);
    assertThat(claims().stream().map(c -> c.getMetadata().getName()).sorted().toList())
        .as("the same claims, launched once the API was back")
        .isEqualTo(names);
    assertThat(fx.count("SELECT count(*) FROM instances")).isEqualTo(3);
    // (Events of this cluster's earlier tests are there too: only this test's claims count.)
    assertThat(kube.v1().events().inAnyNamespace().list().getItems())
        .noneMatch(
            e ->
                "InsufficientCapacityError".equals(e.getReason())
                    && names.contains(e.getInvolvedObject().getName()));
  }

  @Test
  void aShapeWithoutMachinesByLaunchTimeFallsBackToTheNextAcceptableOne() throws Exception {
    // The 8-cpu shape looks warm and is cheaper, but its one machine is cordoned: the launch cannot
    // have it.
    String small = fx.registerMachines(1, ApiFixture.facts(8, 32), true).get(0);
    fx.client.post("/v1/machines/" + small + "/cordon", ApiFixture.ADMIN, null);
    // (The controller reads the fleet's shapes in the background: a pod planned before it has read
    // the new one would never consider it.)
    Await.until(
        "the controller offered x86-8c-32g", () -> cluster.installation.offers("x86-8c-32g"));
    kube.pods().inNamespace("default").resource(pending("small-1", "1")).create();

    Await.until(
        "a NodeClaim initialized",
        () ->
            kube.resources(NodeClaim.class).list().getItems().stream()
                .anyMatch(
                    c ->
                        c.getStatus() != null
                            && Conditions.isTrue(
                                c.getStatus().conditions, Conditions.INITIALIZED)));
    NodeClaim claim = kube.resources(NodeClaim.class).list().getItems().get(0);
    assertThat(
            claim.getSpec().requirements.stream()
                .filter(r -> r.getKey().equals("node.kubernetes.io/instance-type"))
                .findFirst()
                .orElseThrow()
                .getValues())
        .startsWith("x86-8c-32g")
        .contains("x86-16c-64g");
    assertThat(claim.getMetadata().getLabels())
        .containsEntry("node.kubernetes.io/instance-type", "x86-16c-64g");
    assertThat(fx.count("SELECT count(*) FROM instances WHERE shape = 'x86-16c-64g'")).isEqualTo(1);
  }

  @Test
  void aNodeThatNeverRegistersIsGivenUpAfterTheNodeClassTimeout(Vertx vertx) throws Exception {
    // One more machine, of another shape, whose agent joins but has no kubelet: its Node never
    // appears.
    cluster.addAgents(vertx, 1, ApiFixture.facts(8, 32), "silent-", false);
    fx.client.put(
        "/v1/pools/x86-8c-32g",
        ApiFixture.ADMIN,
        new JsonObject().put("minWarm", 1).put("maxWarm", 1));
    Await.until(
        "the silent machine warm",
        () ->
            fx.count("SELECT count(*) FROM machines WHERE shape = 'x86-8c-32g' AND state = 'warm'")
                == 1);
    Fleet.retrying(
        () ->
            kube.resources(WarmMetalNodeClass.class)
                .withName("default")
                .edit(
                    c -> {
                      c.getSpec().registrationTimeout = "2s";
                      return c;
                    }));

    Pod pod = pending("small-2", "1");
    pod.getSpec().setNodeSelector(Map.of("node.kubernetes.io/instance-type", "x86-8c-32g"));
    kube.pods().inNamespace("default").resource(pod).create();
    Await.until(
        "launched on the silent machine",
        () -> fx.count("SELECT count(*) FROM instances WHERE shape = 'x86-8c-32g'") == 1);
    String silent =
        fx.db()
            .query("SELECT id FROM machines WHERE name LIKE 'silent-%'")
            .execute()
            .await()
            .iterator()
            .next()
            .getString("id");
    List<String> claimOnSilent = new ArrayList<>();
    Await.until(
        "the claim records its launch",
        () -> {
          kube.resources(NodeClaim.class).list().getItems().stream()
              .filter(
                  c ->
                      c.getStatus() != null
                          && ("warmmetal://" + silent).equals(c.getStatus().providerID))
              .forEach(c -> claimOnSilent.add(c.getMetadata().getName()));
          return !claimOnSilent.isEmpty();
        });
    // Given up: that claim is deleted and its instance terminated (the pod is then planned again,
    // as in Karpenter).
    Await.until(
        "the late claim given up",
        () -> kube.resources(NodeClaim.class).withName(claimOnSilent.get(0)).get() == null);
    assertThat(
            fx.count(
                "SELECT count(*) FROM instances WHERE machine_id = $1 AND state IN ('shutting-down',"
                    + " 'terminated')",
                silent))
        .isGreaterThanOrEqualTo(1);
    // The NodePool says its nodes do not register, as upstream's NodeRegistrationHealthy does.
    Await.until(
        "NodeRegistrationHealthy False",
        () -> {
          var pool = kube.resources(NodePool.class).withName("default").get();
          var c =
              pool.getStatus() == null
                  ? null
                  : Conditions.get(
                      pool.getStatus().conditions, Conditions.NODE_REGISTRATION_HEALTHY);
          return c != null
              && "False".equals(c.getStatus())
              && "RegistrationFailed".equals(c.getReason());
        });
  }

  @Test
  void aBurstOfAHundredMixedPodsIsPackedOntoTheFewestNodes() throws Exception {
    fx.client.put(
        "/v1/pools/" + Fleet.SHAPE,
        ApiFixture.ADMIN,
        new JsonObject().put("minWarm", 3).put("maxWarm", 7));
    fx.registerMachines(
        4, ApiFixture.facts(16, 64), true); // warm too (their Nodes never come): seven in all
    Await.until("seven warm", () -> cluster.warm() == 7);
    // While the pool names no node class that exists it plans nothing: the whole burst arrives at
    // once.
    cluster.updatePool(pool -> pool.getSpec().template.spec.nodeClassRef.name = "later");
    for (int i = 0; i < 100; i++) {
      String cpu = i < 20 ? "2" : i < 50 ? "1" : "500m";
      kube.pods().inNamespace("default").resource(pending("mixed-" + i, cpu)).create();
    }
    cluster.updatePool(pool -> pool.getSpec().template.spec.nodeClassRef.name = "default");
    // 95 cpu on 15.9-cpu nodes, first-fit decreasing: 20 × 2 fill three nodes (7, 7, 6), 30 × 1
    // fill their gaps and
    // two more (15 and 10 pods), 50 × 0.5 top all five up and need two more — seven nodes, not 100,
    // not six.
    Await.until(
        "seven NodeClaims launched",
        () ->
            cluster.claims().stream()
                    .filter(
                        c ->
                            c.getStatus() != null
                                && Conditions.isTrue(c.getStatus().conditions, Conditions.LAUNCHED))
                    .count()
                == 7);
    cluster.awaitPasses(3); // nothing more follows
    assertThat(cluster.claims())
        .hasSize(7)
        .allSatisfy(
            c ->
                assertThat(c.getMetadata().getLabels())
                    .containsEntry("node.kubernetes.io/instance-type", Fleet.SHAPE));
    assertThat(fx.count("SELECT count(*) FROM instances")).isEqualTo(7);
  }

  @Test
  void aNodePoolsLimitsCountTheNodesItAlreadyHas() throws Exception {
    cluster.updatePool(pool -> pool.getSpec().limits = Map.of("cpu", new Quantity("20")));
    kube.pods().inNamespace("default").resource(pending("big-1", "10")).create();
    Await.until("one node", () -> cluster.initialized().size() == 1);
    cluster.awaitScheduled("big-1"); // there, before another pod could take its place
    // A second 10-cpu pod fits neither on that node (5.9 cpu left) nor under the limit (16 + 16 >
    // 20).
    kube.pods().inNamespace("default").resource(pending("big-2", "10")).create();
    cluster.awaitDecided("big-2");
    cluster.awaitPasses(3);
    assertThat(cluster.claims()).hasSize(1);
    cluster.updatePool(pool -> pool.getSpec().limits = Map.of("cpu", new Quantity("32")));
    Await.until("the second node once the limit allows it", () -> cluster.claims().size() == 2);
  }

  @Test
  void taintsAndNodeAffinityDecideWhichPodsGetANode() throws Exception {
    cluster.updatePool(
        pool ->
            pool.getSpec().template.spec.taints =
                List.of(
                    new TaintBuilder()
                        .withKey("dedicated")
                        .withValue("ml")
                        .withEffect("NoSchedule")
                        .build()));
    Toleration ml =
        new TolerationBuilder()
            .withKey("dedicated")
            .withOperator("Equal")
            .withValue("ml")
            .withEffect("NoSchedule")
            .build();
    Pod intolerant = pending("intolerant", "1");
    Pod tooBig = pending("wants-64-cpus", "1");
    tooBig.getSpec().setTolerations(List.of(ml));
    tooBig.getSpec().setAffinity(affinity("warmmetal.io/cpu", "Gt", "32"));
    kube.pods().inNamespace("default").resource(intolerant).create();
    kube.pods().inNamespace("default").resource(tooBig).create();
    cluster.awaitDecided("intolerant");
    cluster.awaitDecided("wants-64-cpus");
    cluster.awaitPasses(3);
    assertThat(cluster.claims()).isEmpty(); // neither can go to this pool's nodes

    Pod fits = pending("tolerates-and-wants-16", "1");
    fits.getSpec().setTolerations(List.of(ml));
    fits.getSpec().setAffinity(affinity("warmmetal.io/cpu", "In", "16"));
    kube.pods().inNamespace("default").resource(fits).create();
    Await.until("a node for the pod that fits", () -> cluster.initialized().size() == 1);
    Node node = kube.nodes().withName(cluster.initialized().get(0).getStatus().nodeName).get();
    assertThat(node.getSpec().getTaints()).anyMatch(t -> t.getKey().equals("dedicated"));
    cluster.awaitPasses(3); // nothing more follows
    assertThat(cluster.claims()).hasSize(1);
  }

  private static Affinity affinity(String key, String operator, String value) {
    return new AffinityBuilder()
        .withNewNodeAffinity()
        .withNewRequiredDuringSchedulingIgnoredDuringExecution()
        .addNewNodeSelectorTerm()
        .addNewMatchExpression()
        .withKey(key)
        .withOperator(operator)
        .withValues(value)
        .endMatchExpression()
        .endNodeSelectorTerm()
        .endRequiredDuringSchedulingIgnoredDuringExecution()
        .endNodeAffinity()
        .build();
  }
}
