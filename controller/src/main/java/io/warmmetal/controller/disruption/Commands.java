package io.warmmetal.controller.disruption;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.warmmetal.controller.claims.NodeClaimWriter;
import io.warmmetal.controller.events.Event;
import io.warmmetal.controller.events.KarpenterEvents;
import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.termination.DisruptedTaint;
import io.warmmetal.controller.termination.Termination;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Disruptions that replace before they remove, as upstream's orchestration queue: the nodes chosen
 * are tainted {@code karpenter.sh/disrupted} (no new pods), their replacements launched, and only
 * once every replacement is initialized are they deleted (and drained). A replacement that goes
 * away, or does not come up within {@link #TIMEOUT}, gives the command up: the taint is lifted, the
 * nodes stay. The command lives in annotations on the NodeClaims it disrupts, so a restarted or new
 * leader carries it on.
 */
final class Commands {
  private static final Logger LOG = LoggerFactory.getLogger(Commands.class);
  static final String REPLACED_BY = "warmmetal.io/replaced-by";
  static final String REASON = Termination.DISRUPTION_REASON;
  static final String STARTED = "warmmetal.io/disruption-started";

  /** Upstream waits ten minutes for replacements to initialize. */
  static final Duration TIMEOUT = Duration.ofMinutes(10);

  private final KubernetesClient kube;
  private final NodeClaimWriter writer;
  private final Recorder events;

  Commands(KubernetesClient kube, NodeClaimWriter writer, Recorder events) {
    this.kube = kube;
    this.writer = writer;
    this.events = events;
  }

  static boolean underway(NodeClaim claim) {
    return annotation(claim, REPLACED_BY) != null;
  }

  /**
   * Starts a command: marks the candidates (their Nodes tainted first) as replaced by the claims
   * launched.
   */
  void start(
      List<NodeClaim> candidates,
      List<NodeClaim> replacements,
      String reason,
      Map<String, Node> nodes,
      Instant now) {
    String names =
        String.join(",", replacements.stream().map(c -> c.getMetadata().getName()).toList());
    for (NodeClaim candidate : candidates) {
      // The command first, then the taint: a taint never outlives a command that would lift it.
      annotate(candidate, Map.of(REPLACED_BY, names, REASON, reason, STARTED, now.toString()));
      Node node = nodes.get(candidate.getStatus().nodeName);
      if (node != null) {
        DisruptedTaint.apply(kube, node);
      }
      replacements.forEach(
          r ->
              events.publish(
                  new Event(
                      candidate,
                      Event.NORMAL,
                      "DisruptionLaunching",
                      "Launching NodeClaim: " + reason,
                      List.of(candidate.getMetadata().getUid(), reason),
                      Duration.ofMinutes(2))));
      LOG.info(
          "NodeClaim {}: {}; replaced by {} once initialized",
          candidate.getMetadata().getName(),
          reason,
          names);
    }
  }

  /**
   * Carries every command under way one step: deletes (through {@code disrupt}) the candidates
   * whose replacements are all initialized, gives up those whose replacements are gone or late.
   * Returns whether one is still waiting.
   */
  boolean advance(
      List<NodeClaim> claims,
      Map<String, Node> nodes,
      Instant now,
      BiConsumer<NodeClaim, String> disrupt) {
    Map<String, NodeClaim> byName = new HashMap<>();
    claims.forEach(c -> byName.put(c.getMetadata().getName(), c));
    boolean waiting = false;
    for (NodeClaim candidate : claims) {
      if (candidate.getMetadata().getDeletionTimestamp() != null || !underway(candidate)) {
        continue;
      }
      List<NodeClaim> replacements =
          Arrays.stream(annotation(candidate, REPLACED_BY).split(",")).map(byName::get).toList();
      Node node = candidate.getStatus() == null ? null : nodes.get(candidate.getStatus().nodeName);
      String reason = annotation(candidate, REASON);
      if (replacements.stream()
              .anyMatch(r -> r == null || r.getMetadata().getDeletionTimestamp() != null)
          || Instant.parse(annotation(candidate, STARTED)).plus(TIMEOUT).isBefore(now)) {
        LOG.info(
            "NodeClaim {}: its replacement is gone or late; {} disruption given up",
            candidate.getMetadata().getName(),
            reason);
        events.publish(
            KarpenterEvents.disruptionBlocked(
                candidate,
                "Replacement NodeClaim "
                    + annotation(candidate, REPLACED_BY)
                    + " did not initialize; disruption given up"));
        if (node != null) {
          DisruptedTaint.remove(kube, node); // the taint first, then the command that owns it
        }
        Map<String, String> clear = new HashMap<>();
        clear.put(REPLACED_BY, null);
        clear.put(REASON, null);
        clear.put(STARTED, null);
        annotate(candidate, clear);
      } else if (replacements.stream()
          .allMatch(
              r ->
                  r.getStatus() != null
                      && Conditions.isTrue(r.getStatus().conditions, Conditions.INITIALIZED))) {
        disrupt.accept(candidate, reason);
      } else {
        waiting = true;
        if (node != null) {
          DisruptedTaint.apply(
              kube, node); // as soon as it is chosen: no new pod lands there meanwhile
        }
        events.publish(
            new Event(
                candidate,
                Event.NORMAL,
                "DisruptionWaitingReadiness",
                "Waiting on readiness to continue disruption",
                List.of(candidate.getMetadata().getUid()),
                Duration.ofMinutes(2)));
      }
    }
    return waiting;
  }

  private void annotate(NodeClaim claim, Map<String, String> annotations) {
    writer.annotate(claim, annotations);
    Map<String, String> mine =
        claim.getMetadata().getAnnotations() == null
            ? new HashMap<>()
            : new HashMap<>(claim.getMetadata().getAnnotations());
    annotations.forEach(
        (k, v) -> {
          if (v == null) {
            mine.remove(k);
          } else {
            mine.put(k, v);
          }
        });
    claim.getMetadata().setAnnotations(mine);
  }

  private static String annotation(NodeClaim claim, String key) {
    return claim.getMetadata().getAnnotations() == null
        ? null
        : claim.getMetadata().getAnnotations().get(key);
  }
}
