package io.warmmetal.controller.disruption;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.warmmetal.controller.claims.NodeClaimWriter;
import io.warmmetal.controller.claims.NodeClaims;
import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.events.WrittenEvents;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.metrics.KarpenterMetrics;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.scheduling.Scheduler;
import io.warmmetal.controller.state.Definitions;
import io.warmmetal.controller.testing.MapStore;
import io.warmmetal.controller.testing.MovingClock;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * A {@link TestCluster} written to fabric8's mock API server (the shipped NodeClaim CRD, so status
 * is a subresource) and whole {@link Disruption} passes over it, as the controller runs them: over
 * what the API server holds, the cluster's capacity, and a clock the test sets. Replacements the
 * capacity launches are recorded in the cluster; {@link #initializeReplacements} brings them up.
 */
final class ApiServerPasses implements AutoCloseable {
  final KubernetesClient kube;
  final TestCluster cluster;
  final MovingClock clock = new MovingClock(TestCluster.T0);
  final KarpenterMetrics metrics = new KarpenterMetrics();
  final Recorder events;
  final Disruption disruption;
  private final MapStore<NodePool> pools = new MapStore<>();

  ApiServerPasses(KubernetesClient kube, TestCluster cluster) throws IOException {
    this.kube = kube;
    this.cluster = cluster;
    try (InputStream in =
        Files.newInputStream(Path.of("..", "deploy", "crds", "karpenter.sh_nodeclaims.yaml"))) {
      kube.apiextensions()
          .v1()
          .customResourceDefinitions()
          .resource(Serialization.unmarshal(in, CustomResourceDefinition.class))
          .create();
    }
    events = new Recorder(kube);
    disruption =
        new Disruption(
            kube,
            new NodeClaimWriter(
                kube,
                new NodeClaims(
                    kube.resources(NodeClaim.class).runnableInformer(0).getStore(), clock)),
            new Definitions(pools, new MapStore<WarmMetalNodeClass>()),
            cluster.scheduler,
            cluster.capacity(),
            events,
            metrics,
            clock,
            Runnable::run);
  }

  @Override
  public void close() {
    events.close();
  }

  /** Writes what the cluster holds now (its claims, nodes, pods, PDBs) to the API server. */
  void create() {
    cluster.claims.forEach(this::create);
    cluster.nodes.forEach(n -> kube.nodes().resource(n).create());
    cluster.pods.forEach(this::create);
    cluster.pdbs.forEach(b -> kube.policy().v1().podDisruptionBudget().resource(b).create());
  }

  /** Writes the claim, with its status. */
  void create(NodeClaim claim) {
    NodeClaim created = kube.resources(NodeClaim.class).resource(claim).create();
    created.setStatus(claim.getStatus());
    kube.resources(NodeClaim.class).resource(created).updateStatus();
  }

  /** Writes the pod, with its status (a subresource: create leaves it out). */
  void create(Pod pod) {
    Pod created = kube.pods().resource(pod).create();
    if (pod.getStatus() != null) {
      created.setStatus(pod.getStatus());
      kube.pods().resource(created).updateStatus();
    }
  }

  NodeClaim claim(String name) {
    return kube.resources(NodeClaim.class).withName(name).get();
  }

  Node node(String name) {
    return kube.nodes().withName(name).get();
  }

  /** The NodeClaims there are (not deleted), by name. */
  List<String> claims() {
    return kube.resources(NodeClaim.class).list().getItems().stream()
        .filter(c -> c.getMetadata().getDeletionTimestamp() == null)
        .map(c -> c.getMetadata().getName())
        .sorted()
        .toList();
  }

  /** Whether the claim is gone (or going). */
  boolean deleted(String name) {
    NodeClaim claim = claim(name);
    return claim == null || claim.getMetadata().getDeletionTimestamp() != null;
  }

  boolean tainted(String node) {
    Node n = node(node);
    return n.getSpec().getTaints() != null
        && n.getSpec().getTaints().stream()
            .anyMatch(t -> WellKnown.DISRUPTED_TAINT.equals(t.getKey()));
  }

  /** One pass, over what the API server holds now, at {@code at}. */
  void pass(Instant at) throws Exception {
    clock.set(at);
    pools.list().forEach(p -> pools.remove(p.getMetadata().getName()));
    cluster.pools.values().forEach(pools::put);
    List<Pod> pods = kube.pods().inAnyNamespace().list().getItems();
    List<Node> nodes = kube.nodes().list().getItems();
    // As the controller lists them: only the claims of our node class.
    List<NodeClaim> claims =
        kube.resources(NodeClaim.class).list().getItems().stream()
            .filter(NodeClaims::ours)
            .toList();
    disruption.reconcile(
        pods,
        nodes,
        claims,
        kube.policy().v1().podDisruptionBudget().inAnyNamespace().list().getItems());
  }

  /**
   * Creates the replacements launched so far that are not there yet, launched, and initializes them
   * (each with a Node) if {@code initialized}: upstream's ExpectMakeNewNodeClaimsReady.
   */
  void replacementsUp(boolean initialized) {
    for (int launch = 0; launch < cluster.launched.size(); launch++) {
      List<Scheduler.PlannedNode> nodes = cluster.launched.get(launch);
      for (int i = 0; i < nodes.size(); i++) {
        String name = "replacement-" + (launch + 1) + "-" + i;
        if (claim(name) == null) {
          NodeClaim replacement = new NodeClaim();
          replacement.getMetadata().setName(name);
          replacement
              .getMetadata()
              .setLabels(
                  Map.of(
                      WellKnown.NODEPOOL_LABEL,
                      nodes.get(i).pool().name(),
                      WellKnown.INSTANCE_TYPE_LABEL,
                      nodes.get(i).type().name()));
          replacement.getSpec().nodeClassRef =
              cluster.pools.get(nodes.get(i).pool().name()).getSpec().template.spec.nodeClassRef;
          replacement.setStatus(new NodeClaim.Status());
          Conditions.set(
              replacement.getStatus().conditions, Conditions.LAUNCHED, true, "Launched", "");
          create(replacement);
        }
        NodeClaim there = claim(name);
        if (initialized && node(name) == null) {
          there.getStatus().nodeName = name;
          there.getStatus().lastPodEventTime = clock.instant().toString();
          Conditions.set(
              there.getStatus().conditions, Conditions.INITIALIZED, true, "Initialized", "");
          kube.resources(NodeClaim.class).resource(there).updateStatus();
          kube.nodes().resource(TestCluster.readyNode(name)).create();
        }
      }
    }
  }

  /** The events written in the namespace ({@code ""}: cluster-scoped objects' events). */
  List<Event> events(String namespace) throws Exception {
    return WrittenEvents.in(kube, events, namespace);
  }

  /** The value of the metric's series whose labels include these, as scraped; null if none. */
  Double metric(String name, Map<String, String> labels) {
    for (String line : metrics.scrape().lines().toList()) {
      if (!line.startsWith(name + "{") && !line.startsWith(name + " ")) {
        continue;
      }
      boolean all =
          labels.entrySet().stream()
              .allMatch(e -> line.contains(e.getKey() + "=\"" + e.getValue() + "\""));
      if (all) {
        return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return null;
  }
}
