package io.warmmetal.controller.lifecycle;

import io.fabric8.kubernetes.api.model.Node;
import io.warmmetal.controller.claims.NodeClaimWriter;
import io.warmmetal.controller.claims.NodeClaims;
import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.health.NodeHealth;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.pools.RegistrationHealth;
import io.warmmetal.controller.provisioning.Launcher;
import io.warmmetal.controller.queue.WorkQueue;
import io.warmmetal.controller.registration.Registration;
import io.warmmetal.controller.state.Definitions;
import io.warmmetal.controller.termination.NodeFinalizer;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Each NodeClaim's own lifecycle, as upstream's {@code nodeclaim/lifecycle} controller: launch (its
 * instance created through the cloud provider, and recorded), registration (its Node found by
 * provider ID, synced and its unregistered taint lifted), initialization (Ready, startup taints
 * gone), liveness (given up when no Node registers in time), node repair (its Node unhealthy too
 * long: {@link NodeHealth}) and, once it is deleted, termination (drain, instance, finalizer: the
 * {@link Terminator}). One reconcile per claim at a time, many claims at once, on a {@link
 * WorkQueue}: a burst's claims are launched and registered side by side, and none waits for
 * another's — nor for the provisioner's plan. Woken by the claim's and its Node's informer events;
 * a claim being deleted is termination's, and so is one whose Node was deleted (by hand: the Node's
 * finalizer keeps it until termination is done).
 */
public final class NodeClaimLifecycle implements AutoCloseable {
  private final NodeClaims claims;
  private final Function<String, Node> nodeByProvider;
  private static final Logger LOG = LoggerFactory.getLogger(NodeClaimLifecycle.class);
  private final NodeClaimWriter writer;
  private final Launcher launcher;
  private final Registration registration;
  private final Liveness liveness;
  private final Consistency consistency;

  /** Node repair (upstream's node.health); null when its feature gate is off. */
  private final NodeHealth nodeHealth;

  /** Claims to launch. */
  private final WorkQueue<String> launches;

  /**
   * Claims launched or being deleted: registration, initialization, liveness, termination — apart
   * from the launches, so a Node that registers is not queued behind a burst's launches.
   */
  private final WorkQueue<String> nodes;

  private final Terminator terminator;

  /** How often a claim whose termination waits (pods draining) is looked at again. */
  static final Duration DRAIN_RECHECK = Duration.ofSeconds(1);

  /** A claim being deleted, taken one step further: true when it is done. */
  @FunctionalInterface
  public interface Terminator {
    boolean terminate(NodeClaim claim);
  }

  private final Clock clock;

  /**
   * Claims whose launch the fleet asked to retry later (its Retry-After): woken sooner by an event
   * or a pass, they still wait.
   */
  private final Map<String, Instant> notBefore = new ConcurrentHashMap<>();

  /**
   * @param nodeByProvider the Node (as the informer has it) with this provider ID, or null
   * @param nodeHealth node repair, null when its feature gate ({@code NodeRepair}) is off
   * @param events where the consistency check's findings are told
   * @param workers how many claims are reconciled at once
   */
  public NodeClaimLifecycle(
      NodeClaims claims,
      NodeClaimWriter writer,
      Function<String, Node> nodeByProvider,
      Launcher launcher,
      Registration registration,
      Terminator terminator,
      NodeHealth nodeHealth,
      Definitions defs,
      RegistrationHealth health,
      Recorder events,
      Clock clock,
      int workers,
      WorkQueue.Observer observer) {
    this.claims = claims;
    this.nodeByProvider = nodeByProvider;
    this.writer = writer;
    this.launcher = launcher;
    this.registration = registration;
    this.terminator = terminator;
    this.nodeHealth = nodeHealth;
    this.liveness = new Liveness(defs, writer, health, clock);
    this.consistency = new Consistency(writer, events, clock);
    this.clock = clock;
    this.launches =
        new WorkQueue<>(
            "nodeclaim-launch",
            workers,
            Duration.ofMillis(100),
            Duration.ofSeconds(30),
            this::launch,
            observer);
    this.nodes =
        new WorkQueue<>(
            "nodeclaim-lifecycle",
            workers,
            Duration.ofMillis(100),
            Duration.ofSeconds(30),
            this::reconcile,
            observer);
  }

  /** The claim changed (or its Node did): reconcile it soon. */
  public void changed(String claimName) {
    if (claims.awaitingLaunch(claimName)) {
      launches.add(claimName);
    } else {
      nodes.add(claimName);
    }
  }

  private static boolean launched(NodeClaim claim) {
    return claim.getStatus() != null
        && Conditions.isTrue(claim.getStatus().conditions, Conditions.LAUNCHED);
  }

  /** Claims waiting or being reconciled. */
  public int depth() {
    return launches.depth() + nodes.depth();
  }

  /** Claims waiting to launch, or launching. */
  public int launchDepth() {
    return launches.depth();
  }

  /** Claims waiting for (or in) everything after their launch. */
  public int lifecycleDepth() {
    return nodes.depth();
  }

  /** Reconciles finished so far: what a test counts to know a claim was looked at again. */
  public long reconciled() {
    return launches.reconciled() + nodes.reconciled();
  }

  /** A claim not launched yet: launched (its record's event brings it to {@link #reconcile}). */
  private Duration launch(String name) {
    NodeClaim claim = claims.get(name);
    if (claim == null || claim.getMetadata().getDeletionTimestamp() != null || launched(claim)) {
      notBefore.remove(name);
      if (claim != null) {
        nodes.add(name);
      }
      return null;
    }
    Instant retryAt = notBefore.get(name);
    if (retryAt != null && retryAt.isAfter(clock.instant())) {
      return Duration.between(clock.instant(), retryAt);
    }
    MDC.put("nodeclaim", name);
    try {
      return launch(claim);
    } finally {
      MDC.remove("nodeclaim");
    }
  }

  private Duration reconcile(String name) {
    NodeClaim claim = claims.get(name);
    if (claim == null) {
      notBefore.remove(name);
      consistency.forget(name);
      return null;
    }
    MDC.put("nodeclaim", name);
    try {
      Node node =
          claim.getStatus() == null || claim.getStatus().providerID == null
              ? null
              : nodeByProvider.apply(claim.getStatus().providerID);
      NodeHealth.Outcome repair =
          nodeHealth == null || node == null ? null : nodeHealth.check(claim, node);
      if (repair != null && repair.wrote()) {
        return null; // annotated or deleted: the claim's informer event brings the next step
      }
      Duration repairAgain = repair == null ? null : repair.lookAgainIn();
      if (claim.getMetadata().getDeletionTimestamp() != null) {
        notBefore.remove(name);
        return terminator.terminate(claim) ? null : DRAIN_RECHECK;
      }
      if (!launched(claim)) {
        launches.add(name);
        return null;
      }
      if (node != null && NodeFinalizer.deleting(node)) {
        // Deleted by hand: its claim goes too, and termination drains it, as upstream's.
        LOG.info("NodeClaim {}: its Node {} was deleted", name, node.getMetadata().getName());
        writer.delete(claim);
        return null;
      }
      if (Conditions.isTrue(claim.getStatus().conditions, Conditions.INITIALIZED)) {
        return node == null ? repairAgain : sooner(repairAgain, consistency.check(claim, node));
      }
      if (node != null) {
        registration.reconcile(claim, node);
      }
      return Conditions.isTrue(claim.getStatus().conditions, Conditions.REGISTERED)
          ? repairAgain
          : sooner(repairAgain, liveness.check(claim));
    } finally {
      MDC.remove("nodeclaim");
    }
  }

  /** The sooner of two delays (null: none). */
  private static Duration sooner(Duration a, Duration b) {
    if (a == null || b == null) {
      return a == null ? b : a;
    }
    return a.compareTo(b) <= 0 ? a : b;
  }

  /** Launches and records; the record's informer event brings the next step. */
  private Duration launch(NodeClaim claim) {
    String name = claim.getMetadata().getName();
    Launcher.Outcome outcome = launcher.launch(claim);
    if (outcome instanceof Launcher.Later later) {
      notBefore.put(name, clock.instant().plus(later.after()));
      return later.after();
    }
    notBefore.remove(name);
    if (outcome instanceof Launcher.Done done) {
      launcher.record(done);
    }
    return null;
  }

  @Override
  public void close() {
    launches.close();
    nodes.close();
  }
}
