package io.warmmetal.controller.disruption;

import io.fabric8.kubernetes.api.model.Pod;
import io.warmmetal.controller.claims.NodeClaimWriter;
import io.warmmetal.controller.karpenter.NodeClaim;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps each NodeClaim's {@code status.lastPodEventTime} at the last time a pod came to or left its
 * node, as upstream's pod events controller: a change restarts the {@code consolidateAfter} clock.
 * As upstream, a claim whose last pod event is under {@link #DEDUPE} old is not written again, and
 * the writes go off the pass's thread: a burst's pods landing on hundreds of nodes are hundreds of
 * writes, which held every pass for seconds.
 */
final class PodEvents {
  private static final Logger LOG = LoggerFactory.getLogger(PodEvents.class);

  static final Duration DEDUPE = Duration.ofSeconds(10);

  private final NodeClaimWriter writer;
  private final Executor writes;

  /** Claims with a write on its way: not asked for again meanwhile. */
  private final Set<String> writing = ConcurrentHashMap.newKeySet();

  /** The pods last seen on each node: a change is a pod event. */
  private final Map<String, Set<String>> seen = new HashMap<>();

  PodEvents(NodeClaimWriter writer, Executor writes) {
    this.writer = writer;
    this.writes = writes;
  }

  /** Records a pod event on the claim if the pods on its node are not those seen last. */
  void record(NodeClaim claim, List<Pod> onNode, Instant now) {
    Set<String> uids = new TreeSet<>(onNode.stream().map(p -> p.getMetadata().getUid()).toList());
    Set<String> before = seen.get(claim.getStatus().nodeName);
    boolean changed =
        before == null ? claim.getStatus().lastPodEventTime == null : !before.equals(uids);
    String last = claim.getStatus().lastPodEventTime;
    if (changed
        && (last == null || !Instant.parse(last).plus(DEDUPE).isAfter(now))
        && writing.add(claim.getMetadata().getName())) {
      claim.getStatus().lastPodEventTime = now.toString(); // this pass decides with it
      String name = claim.getMetadata().getName();
      try {
        writes.execute(() -> write(name, now));
      } catch (RejectedExecutionException closed) {
        writing.remove(name);
      }
    }
    seen.put(claim.getStatus().nodeName, uids);
  }

  private void write(String name, Instant at) {
    try {
      writer.editStatus(
          name,
          c -> {
            c.getStatus().lastPodEventTime = at.toString();
            return c;
          });
    } catch (RuntimeException e) {
      LOG.debug("NodeClaim {}: its last pod event not recorded ({})", name, e.getMessage());
    } finally {
      writing.remove(name);
    }
  }
}
