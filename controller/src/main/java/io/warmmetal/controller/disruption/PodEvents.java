package io.warmmetal.controller.disruption;

import io.fabric8.kubernetes.api.model.Pod;
import io.warmmetal.controller.claims.NodeClaimWriter;
import io.warmmetal.controller.karpenter.NodeClaim;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps each NodeClaim's {@code status.lastPodEventTime} at the last time a pod came to or left its
 * node, as upstream's pod events controller: a change restarts the {@code consolidateAfter} clock.
 */
final class PodEvents {
  private static final Logger LOG = LoggerFactory.getLogger(PodEvents.class);

  private final NodeClaimWriter writer;

  /** The pods last seen on each node: a change is a pod event. */
  private final Map<String, Set<String>> seen = new HashMap<>();

  PodEvents(NodeClaimWriter writer) {
    this.writer = writer;
  }

  /** Records a pod event on the claim if the pods on its node are not those seen last. */
  void record(NodeClaim claim, List<Pod> onNode, Instant now) {
    Set<String> uids = new TreeSet<>(onNode.stream().map(p -> p.getMetadata().getUid()).toList());
    Set<String> before = seen.get(claim.getStatus().nodeName);
    boolean changed =
        before == null ? claim.getStatus().lastPodEventTime == null : !before.equals(uids);
    if (changed) {
      try {
        writer.editStatus(
            claim.getMetadata().getName(),
            c -> {
              c.getStatus().lastPodEventTime = now.toString();
              return c;
            });
        claim.getStatus().lastPodEventTime = now.toString();
      } catch (RuntimeException e) {
        LOG.warn(
            "NodeClaim {}: recording its last pod event failed ({}); next pass",
            claim.getMetadata().getName(),
            e.getMessage());
        return;
      }
    }
    seen.put(claim.getStatus().nodeName, uids);
  }
}
