package io.warmmetal.controller.registration;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.warmmetal.controller.claims.NodeClaimWriter;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.NodeReadiness;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.metrics.KarpenterMetrics;
import io.warmmetal.controller.pools.RegistrationHealth;
import io.warmmetal.controller.state.Definitions;
import io.warmmetal.controller.termination.NodeFinalizer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A launched NodeClaim meets its Node, matched by providerID, as Karpenter's lifecycle does:
 * Registered (the Node gets the NodeClaim's labels and annotations and {@code
 * karpenter.sh/registered=true}, its taints and startup taints, an owner reference to the NodeClaim
 * and the {@code karpenter.sh/termination} finalizer, and the unregistered taint comes off), then
 * Initialized once the Node is Ready, its startup taints and the known ephemeral taints (not-ready,
 * unreachable, network-unavailable, an uninitialized cloud provider) are gone and every extended
 * resource the NodeClaim asked for is allocatable — the Node then gets {@code
 * karpenter.sh/initialized=true}.
 */
public final class Registration {
  private static final Logger LOG = LoggerFactory.getLogger(Registration.class);

  private final KubernetesClient kube;
  private final NodeClaimWriter writer;
  private final Definitions defs;
  private final KarpenterMetrics metrics;
  private final RegistrationHealth health;

  public Registration(
      KubernetesClient kube,
      NodeClaimWriter writer,
      Definitions defs,
      KarpenterMetrics metrics,
      RegistrationHealth health) {
    this.kube = kube;
    this.writer = writer;
    this.defs = defs;
    this.metrics = metrics;
    this.health = health;
  }

  /**
   * Registers the launched claim's Node (found by its provider ID) and initializes the claim once
   * the Node is ready: one claim, as its lifecycle reconciles it. A status write that crosses
   * another's answers 409, and the lifecycle tries again.
   */
  public void reconcile(NodeClaim claim, Node node) {
    if (claim.getStatus() == null
        || claim.getStatus().providerID == null
        || Conditions.isTrue(claim.getStatus().conditions, Conditions.INITIALIZED)) {
      return;
    }
    advance(claim, node);
  }

  private void advance(NodeClaim claim, Node node) {
    boolean changed = false;
    Node current = node; // the informer's copy, or the one our edit returned
    if (Conditions.isTrue(claim.getStatus().conditions, Conditions.REGISTERED)
        && taints(node).stream().anyMatch(t -> WellKnown.UNREGISTERED_TAINT.equals(t.getKey()))) {
      // Registered, yet the taint is back (a kubelet that wrote its Node again, a write that
      // crossed ours): sync
      // again rather than wait on it for ever.
      current = register(claim, node);
    }
    if (!Conditions.isTrue(claim.getStatus().conditions, Conditions.REGISTERED)) {
      current = register(claim, node);
      claim.getStatus().nodeName = node.getMetadata().getName();
      // What the Node reports, with what the launch expected of the machine over it (the
      // consistency check holds the Node to that); what the launch could not know (pods, disks)
      // as the Node says.
      Map<String, Quantity> capacity = new HashMap<>();
      if (node.getStatus() != null && node.getStatus().getCapacity() != null) {
        capacity.putAll(node.getStatus().getCapacity());
      }
      if (claim.getStatus().capacity != null) {
        capacity.putAll(claim.getStatus().capacity);
      }
      claim.getStatus().capacity = capacity.isEmpty() ? null : capacity;
      claim.getStatus().allocatable =
          node.getStatus() == null ? null : node.getStatus().getAllocatable();
      Conditions.set(
          claim.getStatus().conditions,
          Conditions.REGISTERED,
          true,
          "Registered",
          "Node " + node.getMetadata().getName());
      changed = true;
      health.registered(claim.getMetadata().getLabels().get(WellKnown.NODEPOOL_LABEL));
      metrics.nodeCreated(
          claim.getMetadata().getLabels().get(WellKnown.NODEPOOL_LABEL),
          node.getMetadata().getLabels() == null
              ? ""
              : node.getMetadata().getLabels().get(WellKnown.ZONE_LABEL));
    }
    Pending pending = initializationPending(claim, current);
    if (pending != null) {
      // Why it waits, once it has waited a while: the reasons a node passes through in its first
      // seconds (not ready,
      // its taints not lifted yet) are not worth a status write each for every node of a burst.
      if (waitedLong(claim)) {
        changed |=
            Conditions.set(
                claim.getStatus().conditions,
                Conditions.INITIALIZED,
                "Unknown",
                pending.reason(),
                pending.message());
      }
    } else {
      if (current.getMetadata().getLabels() == null
          || !"true".equals(current.getMetadata().getLabels().get(WellKnown.INITIALIZED_LABEL))) {
        editNode(
            current,
            n -> {
              Map<String, String> labels =
                  new HashMap<>(
                      n.getMetadata().getLabels() == null ? Map.of() : n.getMetadata().getLabels());
              labels.put(WellKnown.INITIALIZED_LABEL, "true");
              n.getMetadata().setLabels(labels);
              return n;
            });
      }
      Conditions.set(
          claim.getStatus().conditions,
          Conditions.INITIALIZED,
          true,
          "Initialized",
          "Node is ready");
      changed = true;
      LOG.info(
          "NodeClaim {} initialized: Node {}",
          claim.getMetadata().getName(),
          node.getMetadata().getName());
    }
    changed |= Conditions.setReady(claim.getStatus().conditions, Conditions.NODECLAIM_READY_ON);
    if (changed) {
      writer.updateStatus(claim);
    }
  }

  /**
   * Syncs the NodeClaim onto its Node (labels, annotations, taints, an owner reference) and lifts
   * the unregistered taint, as Karpenter's registration does.
   */
  private Node register(NodeClaim claim, Node node) {
    String poolName = claim.getMetadata().getLabels().get(WellKnown.NODEPOOL_LABEL);
    NodePool pool = defs.pool(poolName);
    Node registered =
        editNode(
            node,
            n -> {
              Map<String, String> labels =
                  new HashMap<>(
                      n.getMetadata().getLabels() == null ? Map.of() : n.getMetadata().getLabels());
              if (pool != null && pool.getSpec().template.metadata.labels != null) {
                labels.putAll(
                    pool.getSpec()
                        .template
                        .metadata
                        .labels); // claims made before their labels were copied
              }
              labels.putAll(claim.getMetadata().getLabels());
              labels.put(WellKnown.NODECLAIM_LABEL, claim.getMetadata().getName());
              labels.put(WellKnown.REGISTERED_LABEL, "true");
              labels.remove(WellKnown.STANDBY); // a pre-joined node, taken
              n.getMetadata().setLabels(labels);
              if (claim.getMetadata().getAnnotations() != null) {
                Map<String, String> annotations =
                    new HashMap<>(
                        n.getMetadata().getAnnotations() == null
                            ? Map.of()
                            : n.getMetadata().getAnnotations());
                claim
                    .getMetadata()
                    .getAnnotations()
                    .forEach(
                        (k, v) -> {
                          if (!k.startsWith(
                              "warmmetal.io/")) { // the controller's own bookkeeping stays on the
                            // claim
                            annotations.put(k, v);
                          }
                        });
                n.getMetadata().setAnnotations(annotations);
              }
              List<Taint> taints = new ArrayList<>(taints(n));
              // A pre-joined node has run its DaemonSets already: startup taints, which they lift
              // as they start, would stay for ever.
              boolean preJoined =
                  claim.getMetadata().getAnnotations() != null
                      && "true"
                          .equals(
                              claim
                                  .getMetadata()
                                  .getAnnotations()
                                  .get(WellKnown.PRE_JOINED_ANNOTATION));
              for (Taint wanted :
                  concat(
                      claim.getSpec().taints, preJoined ? null : claim.getSpec().startupTaints)) {
                if (taints.stream().noneMatch(t -> sameTaint(t, wanted))) {
                  taints.add(wanted);
                }
              }
              taints.removeIf(
                  t ->
                      WellKnown.UNREGISTERED_TAINT.equals(t.getKey())
                          || WellKnown.STANDBY.equals(t.getKey()));
              n.getSpec().setTaints(taints);
              List<OwnerReference> owners =
                  new ArrayList<>(
                      n.getMetadata().getOwnerReferences() == null
                          ? List.of()
                          : n.getMetadata().getOwnerReferences());
              if (owners.stream().noneMatch(o -> claim.getMetadata().getUid().equals(o.getUid()))) {
                owners.add(
                    new OwnerReferenceBuilder()
                        .withApiVersion("karpenter.sh/v1")
                        .withKind("NodeClaim")
                        .withName(claim.getMetadata().getName())
                        .withUid(claim.getMetadata().getUid())
                        .withBlockOwnerDeletion(true)
                        .build());
              }
              n.getMetadata().setOwnerReferences(owners);
              // A Node deleted by hand waits for its claim's termination (drain, instance).
              NodeFinalizer.add(n);
              return n;
            });
    LOG.info(
        "NodeClaim {} registered: Node {}",
        claim.getMetadata().getName(),
        node.getMetadata().getName());
    return registered;
  }

  private static List<Taint> concat(List<Taint> a, List<Taint> b) {
    List<Taint> all = new ArrayList<>(a == null ? List.of() : a);
    if (b != null) {
      all.addAll(b);
    }
    return all;
  }

  private static boolean sameTaint(Taint a, Taint b) {
    return a.getKey().equals(b.getKey()) && Objects.equals(a.getEffect(), b.getEffect());
  }

  /**
   * Changes the Node: one update from the informer's copy, guarded by its resourceVersion; if the
   * kubelet changed it meanwhile (409 Conflict), again from its latest version.
   */
  private Node editNode(Node cached, UnaryOperator<Node> change) {
    try {
      Node copy = Serialization.clone(cached);
      return kube.nodes().resource(change.apply(copy)).update();
    } catch (KubernetesClientException e) {
      if (e.getCode() != 409) {
        throw e;
      }
    }
    for (int attempt = 1; ; attempt++) {
      try {
        return kube.nodes().withName(cached.getMetadata().getName()).edit(change);
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409 || attempt == 5) {
          throw e;
        }
      }
    }
  }

  private static List<Taint> taints(Node node) {
    return node.getSpec().getTaints() == null ? List.of() : node.getSpec().getTaints();
  }

  /** How long a registered node may take to initialize before its status says why it has not. */
  static final Duration QUIET_WHILE_INITIALIZING = Duration.ofSeconds(30);

  private static boolean waitedLong(NodeClaim claim) {
    var registered = Conditions.get(claim.getStatus().conditions, Conditions.REGISTERED);
    return registered != null
        && registered.getLastTransitionTime() != null
        && Instant.parse(registered.getLastTransitionTime())
            .plus(QUIET_WHILE_INITIALIZING)
            .isBefore(Instant.now());
  }

  /** Why a registered Node is not initialized yet, as upstream's reasons; null when it is. */
  private record Pending(String reason, String message) {}

  private static Pending initializationPending(NodeClaim claim, Node node) {
    if (!NodeReadiness.ready(node)) {
      return new Pending("NodeNotReady", "Node status is NotReady");
    }
    for (Taint t : taints(node)) {
      if (WellKnown.UNREGISTERED_TAINT.equals(t.getKey())
          || claim.getSpec().startupTaints.stream()
              .anyMatch(st -> st.getKey().equals(t.getKey()))) {
        return new Pending(
            "StartupTaintsExist",
            "StartupTaint \"" + t.getKey() + ":" + t.getEffect() + "\" still exists");
      }
      if (WellKnown.EPHEMERAL_TAINTS.contains(t.getKey())) {
        return new Pending(
            "KnownEphemeralTaintsExist",
            "KnownEphemeralTaint \"" + t.getKey() + ":" + t.getEffect() + "\" still exists");
      }
    }
    String missing = unregisteredResource(claim, node);
    return missing == null
        ? null
        : new Pending(
            "ResourceNotRegistered",
            "Resource \"" + missing + "\" was requested but not registered");
  }

  /**
   * An extended resource (a GPU) the claim asked for that the Node does not offer yet — they appear
   * once their device plugin registers them; the kubelet reports zero until then. Null when none.
   */
  private static String unregisteredResource(NodeClaim claim, Node node) {
    Map<String, Quantity> requests = claim.getSpec().resources.requests;
    if (requests == null) {
      return null;
    }
    Map<String, Quantity> allocatable =
        node.getStatus() == null || node.getStatus().getAllocatable() == null
            ? Map.of()
            : node.getStatus().getAllocatable();
    return requests.entrySet().stream()
        .filter(r -> r.getKey().contains("/")) // extended resources only
        .filter(r -> r.getValue().getNumericalAmount().signum() > 0)
        .filter(
            r ->
                !allocatable.containsKey(r.getKey())
                    || allocatable.get(r.getKey()).getNumericalAmount().signum() <= 0)
        .map(Map.Entry::getKey)
        .findFirst()
        .orElse(null);
  }
}
