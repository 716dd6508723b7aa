package io.warmmetal.controller.disruption;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.warmmetal.controller.claims.NodeClaimWriter;
import io.warmmetal.controller.events.KarpenterEvents;
import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.VirtualPod;
import io.warmmetal.controller.metrics.KarpenterMetrics;
import io.warmmetal.controller.provisioning.Provisioner;
import io.warmmetal.controller.scheduling.Scheduler;
import io.warmmetal.controller.state.Definitions;
import io.warmmetal.controller.state.Pods;
import io.warmmetal.controller.termination.DisruptedTaint;
import io.warmmetal.controller.termination.PodBudgets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes nodes away, as Karpenter's disruption controller does, by deleting their NodeClaims
 * (termination drains them). A pass: marks drift ({@link Drift}), deletes expired claims ({@link
 * Expiration}: forcefully, no budgets), records pod events ({@link PodEvents}), carries the
 * commands under way on ({@link Commands}: one disruption at a time), then builds the {@link
 * Candidate}s once and walks its {@link Method}s in order — {@link DriftMethod}, {@link Emptiness},
 * {@link MultiNodeConsolidation}, {@link SingleNodeConsolidation} — until one starts a {@link
 * Command}. Each method decides over a {@link Simulation} of the cluster in which pending pods take
 * their place first (nothing is consolidated onto capacity they would use, no node they are headed
 * for is taken), within its pools' {@link NodePoolBudgets}.
 */
public final class Disruption {
  private static final Logger LOG = LoggerFactory.getLogger(Disruption.class);

  private final KubernetesClient kube;
  private final NodeClaimWriter writer;
  private final Definitions defs;
  private final Scheduler scheduler;
  private final Capacity.Source capacity;
  private final KarpenterMetrics metrics;
  private final Recorder events;
  private final Clock clock;
  private final Drift drift;
  private final DriftMethod drifted = new DriftMethod();
  private final Expiration expiration;
  private final PodEvents podEvents;
  private final Executor podEventWrites;
  private final Commands commands;

  /** Tried in this order; the first that starts a command ends the pass. */
  private final List<Method> methods;

  public Disruption(
      KubernetesClient kube,
      NodeClaimWriter writer,
      Definitions defs,
      Scheduler scheduler,
      Provisioner provisioner,
      Recorder events,
      KarpenterMetrics metrics,
      Clock clock) {
    this(
        kube,
        writer,
        defs,
        scheduler,
        Capacity.of(provisioner),
        events,
        metrics,
        clock,
        Executors.newFixedThreadPool(
            2,
            r -> {
              Thread t = new Thread(r, "warmmetal-pod-events");
              t.setDaemon(true);
              return t;
            }));
  }

  /**
   * @param capacity what the simulation plans against and launches replacements with
   * @param podEventWrites where the claims' last pod event times are written (off the pass)
   */
  Disruption(
      KubernetesClient kube,
      NodeClaimWriter writer,
      Definitions defs,
      Scheduler scheduler,
      Capacity.Source capacity,
      Recorder events,
      KarpenterMetrics metrics,
      Clock clock,
      Executor podEventWrites) {
    this.kube = kube;
    this.podEventWrites = podEventWrites;
    this.writer = writer;
    this.defs = defs;
    this.scheduler = scheduler;
    this.capacity = capacity;
    this.events = events;
    this.metrics = metrics;
    this.clock = clock;
    this.drift = new Drift(writer, defs);
    this.expiration = new Expiration(writer, events, metrics);
    this.podEvents = new PodEvents(writer, podEventWrites);
    this.commands = new Commands(kube, writer, events);
    Consolidation.LastFruitless lastFruitless = new Consolidation.LastFruitless();
    this.methods =
        List.of(
            drifted,
            new Emptiness(events),
            new MultiNodeConsolidation(lastFruitless),
            new SingleNodeConsolidation(lastFruitless));
  }

  public void reconcile(
      List<Pod> pods, List<Node> nodes, List<NodeClaim> claims, List<PodDisruptionBudget> pdbs)
      throws Exception {
    Instant now = clock.instant();
    drift.reconcile(claims);
    Map<String, List<Pod>> podsByNode = podsToMove(pods);
    List<NodeClaim> initialized = new ArrayList<>();
    for (NodeClaim claim : claims) {
      if (claim.getMetadata().getDeletionTimestamp() != null) {
        continue;
      }
      if (Expiration.expired(claim, now)) {
        expiration.expire(claim, nodes, now);
      } else if (Candidate.initialized(claim)) {
        podEvents.record(
            claim, podsByNode.getOrDefault(claim.getStatus().nodeName, List.of()), now);
        initialized.add(claim);
      }
    }
    Map<String, Node> nodesByName = new HashMap<>();
    nodes.forEach(n -> nodesByName.put(n.getMetadata().getName(), n));
    liftLeftoverTaints(initialized, nodesByName);
    if (commands.advance(
        claims, nodesByName, now, (c, reason) -> delete(c, reason, nodesByName, now))) {
      return; // one disruption at a time: the one under way first
    }
    Map<String, NodePool> pools = new HashMap<>();
    defs.pools().forEach(p -> pools.put(p.getMetadata().getName(), p));
    metrics.allowedDisruptions(
        NodePoolBudgets.allowedByReason(pools.values(), claims, nodesByName, now));
    metrics.nodesConsumingBudgets(
        NodePoolBudgets.disruptingByPool(pools.values(), claims, nodesByName),
        NodePoolBudgets.REASONS);
    // A CapacityBuffer's virtual pods (among the pending ones) are in no PodDisruptionBudget.
    PodBudgets budgets =
        PodBudgets.of(pdbs, pods.stream().filter(p -> !VirtualPod.is(p)).toList(), Set.of());
    List<Candidate> candidates =
        Candidate.of(
            initialized,
            podsBound(pods),
            nodesByName,
            pools,
            budgets,
            now,
            (claim, node, why) ->
                events.publish(KarpenterEvents.disruptionBlocked(node, claim, why)));
    tellUnconsolidatable(candidates);
    if (candidates.stream().noneMatch(c -> c.drifted() || c.consolidatable())) {
      Map<String, Integer> none = new HashMap<>();
      methods.forEach(m -> none.put(m.reason().toLowerCase(Locale.ROOT), 0));
      metrics.eligibleNodes(none); // none eligible now, not what was last pass
      return; // nothing to disrupt: no simulation (a burst's passes stay quick)
    }
    Simulation simulation = new Simulation(scheduler, capacity, claims, pods, podsByNode);
    // Nodes pending pods are headed for (kube-scheduler has yet to bind them there) are not
    // disrupted: upstream's nominated nodes.
    Set<String> nominated = simulation.nominated();
    candidates.stream()
        .filter(c -> nominated.contains(c.name()))
        .forEach(
            c ->
                events.publish(
                    KarpenterEvents.disruptionBlocked(
                        c.node(), c.claim(), "Node is nominated for a pending pod")));
    candidates = candidates.stream().filter(c -> !nominated.contains(c.name())).toList();
    // Upstream's Consolidatable condition: past consolidateAfter, and may be consolidated.
    Set<String> consolidatable =
        candidates.stream()
            .filter(c -> c.consolidatable() && c.drainable())
            .map(Candidate::name)
            .collect(Collectors.toSet());
    for (NodeClaim claim : initialized) {
      writer.condition(
          claim,
          Conditions.CONSOLIDATABLE,
          consolidatable.contains(claim.getMetadata().getName()) ? "True" : null,
          Conditions.CONSOLIDATABLE,
          "");
    }
    Pass pass =
        new Pass(
            simulation,
            simulation.holdingBuffers(),
            command -> start(command, simulation, nodesByName, now),
            metrics,
            events);
    Map<Method, List<Candidate>> eligible = new LinkedHashMap<>();
    Map<String, Integer> eligibleByReason = new HashMap<>();
    for (Method method : methods) {
      List<Candidate> mine = eligible(method, candidates, pass);
      eligible.put(method, mine);
      eligibleByReason.put(method.reason().toLowerCase(Locale.ROOT), mine.size());
    }
    metrics.eligibleNodes(eligibleByReason);
    if (eligible.get(drifted).isEmpty() && consolidatable.isEmpty()) {
      return; // nothing drifted or consolidatable: consolidation's last fruitless cluster stays
    }
    for (Method method : methods) {
      long evaluating = System.nanoTime();
      boolean started =
          method.computeCommands(
              eligible.get(method),
              new NodePoolBudgets(method.reason(), claims, nodesByName, now),
              pass);
      metrics.decisionEvaluated(
          method.reason().toLowerCase(Locale.ROOT),
          method.consolidationType(),
          Duration.ofNanos(System.nanoTime() - evaluating));
      if (started) {
        return; // one kind of disruption per pass: the next sees the cluster as it is then
      }
    }
  }

  /**
   * Lifts {@code karpenter.sh/disrupted} from the Nodes of claims no command or deletion holds (a
   * command given up by a leader that stopped half-way, say), as upstream does: the taint would
   * keep pods off a node nothing is taking away.
   */
  private void liftLeftoverTaints(List<NodeClaim> initialized, Map<String, Node> nodes) {
    for (NodeClaim claim : initialized) {
      Node node = nodes.get(claim.getStatus().nodeName);
      if (node != null && !Commands.underway(claim) && DisruptedTaint.on(node)) {
        LOG.info(
            "Node {}: lifting a disrupted taint no disruption holds", claim.getStatus().nodeName);
        DisruptedTaint.remove(kube, node);
      }
    }
  }

  /**
   * Tells the candidates consolidation leaves alone by their NodePool's choice ({@link
   * Consolidation#leftAlone}), on the Node and the NodeClaim, as upstream's consolidation does.
   */
  private void tellUnconsolidatable(List<Candidate> candidates) {
    for (Candidate candidate : candidates) {
      String why = Consolidation.leftAlone(candidate);
      if (why != null && candidate.disruptableBy(Method.DisruptionClass.GRACEFUL)) {
        events.publish(KarpenterEvents.unconsolidatable(candidate.node(), candidate.claim(), why));
      }
    }
  }

  /** The candidates the method may take: of its disruption class, and as it judges them. */
  static List<Candidate> eligible(Method method, List<Candidate> candidates, Pass pass) {
    return candidates.stream()
        .filter(c -> c.disruptableBy(method.disruptionClass()))
        .filter(c -> method.shouldDisrupt(c, pass))
        .toList();
  }

  /** Whether the pod would have to move were its node taken away ({@link #podsToMove}). */
  static boolean reschedulable(Pod pod) {
    return Pods.boundAndMovable(pod)
        || pod.getSpec() != null
            && pod.getSpec().getNodeName() != null
            && pod.getMetadata().getDeletionTimestamp() != null
            && !Pods.finished(pod)
            && !Pods.daemonOrMirror(pod)
            && pod.getMetadata().getOwnerReferences() != null
            && pod.getMetadata().getOwnerReferences().stream()
                .anyMatch(o -> "StatefulSet".equals(o.getKind()));
  }

  /** The pods bound to each node. */
  static Map<String, List<Pod>> podsBound(List<Pod> pods) {
    Map<String, List<Pod>> byNode = new HashMap<>();
    for (Pod pod : pods) {
      if (pod.getSpec() != null && pod.getSpec().getNodeName() != null) {
        byNode.computeIfAbsent(pod.getSpec().getNodeName(), n -> new ArrayList<>()).add(pod);
      }
    }
    return byNode;
  }

  /**
   * The pods bound to each node that would have to move were it taken away: not a DaemonSet's (nor
   * a mirror pod), not finished, not terminating — but for a StatefulSet's terminating pod, which
   * comes back under its name and needs a place (upstream's IsReschedulable).
   */
  static Map<String, List<Pod>> podsToMove(List<Pod> pods) {
    Map<String, List<Pod>> byNode = new HashMap<>();
    for (Pod pod : pods) {
      if (reschedulable(pod)) {
        byNode.computeIfAbsent(pod.getSpec().getNodeName(), n -> new ArrayList<>()).add(pod);
      }
    }
    return byNode;
  }

  /**
   * Carries a command out: deletes the candidates now, or launches their replacements and leaves
   * the rest to {@link Commands}. False if a replacement cannot be launched now (the nodes stay).
   */
  private boolean start(
      Command command, Simulation simulation, Map<String, Node> nodes, Instant now)
      throws Exception {
    Method method = command.method();
    String why = method.reason().toLowerCase(Locale.ROOT);
    List<NodeClaim> candidates = command.candidates().stream().map(Candidate::claim).toList();
    if (command.replacements().isEmpty()) {
      candidates.forEach(c -> delete(c, method.reason(), nodes, now));
    } else {
      List<NodeClaim> launched =
          simulation.capacity().launch(command.replacements(), why, command.priceBelow());
      if (launched == null) {
        return false; // no machine for a replacement now: the nodes stay
      }
      commands.start(candidates, launched, method.reason(), nodes, now);
    }
    metrics.disruptionDecision(
        command.candidates().stream().map(Candidate::poolName).distinct().toList(),
        command.decision(),
        why,
        method.consolidationType());
    return true;
  }

  /** Deletes the claim (termination drains it), counting and telling it as upstream does. */
  private void delete(NodeClaim claim, String reason, Map<String, Node> nodes, Instant now) {
    LOG.info("NodeClaim {}: disrupting ({})", claim.getMetadata().getName(), reason);
    writer.delete(claim);
    String why = reason.toLowerCase(Locale.ROOT);
    String poolName = Candidate.poolOf(claim);
    NodePool pool = defs.pool(poolName);
    metrics.nodeClaimDisrupted(
        why,
        poolName,
        pool == null ? "" : Consolidation.policy(pool),
        Expiration.terminationMode(claim));
    events.publish(
        KarpenterEvents.disruptionTerminating(nodes.get(claim.getStatus().nodeName), claim, why));
    claim
        .getMetadata()
        .setDeletionTimestamp(now.toString()); // counts as disrupting for the rest of this pass
  }

  /** Stops the pod event writes (those under way finish). */
  public void close() {
    if (podEventWrites instanceof ExecutorService pool) {
      pool.shutdown();
    }
  }
}
