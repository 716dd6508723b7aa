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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps each NodeClaim's {@code status.lastPodEventTime} at the last time a pod came to or left its
 * node, as upstream's pod events controller: a change restarts the {@code consolidateAfter} clock.
 * The writes go off the pass's thread — a burst's pods landing on hundreds of nodes are hundreds of
 * writes, which held every pass for seconds — one at a time per claim, the latest event each time;
 * until a claim's is written, the pass decides with it as if it were.
 */
final class PodEvents {
  private static final Logger LOG = LoggerFactory.getLogger(PodEvents.class);

  private final NodeClaimWriter writer;
  private final Executor writes;

  /** Each claim's latest pod event not written yet. */
  private final Map<String, Instant> unwritten = new ConcurrentHashMap<>();

  /** Claims with a write on its way. */
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
    String name = claim.getMetadata().getName();
    if (changed) {
      unwritten.put(name, now);
      write(name);
    }
    Instant pending = unwritten.get(name);
    if (pending != null) {
      claim.getStatus().lastPodEventTime = pending.toString(); // this pass decides with it
    }
    seen.put(claim.getStatus().nodeName, uids);
  }

  /** Writes the claim's latest event, unless a write of it is on its way (that one takes it). */
  private void write(String name) {
    if (!writing.add(name)) {
      return;
    }
    try {
      writes.execute(
          () -> {
            Instant at = unwritten.get(name);
            try {
              if (at != null) {
                writer.editStatus(
                    name,
                    c -> {
                      c.getStatus().lastPodEventTime = at.toString();
                      return c;
                    });
                unwritten.remove(name, at);
              }
            } catch (RuntimeException e) {
              LOG.debug("NodeClaim {}: its last pod event not recorded ({})", name, e.getMessage());
              unwritten.remove(name, at); // the claim is gone, or the next change writes again
            } finally {
              writing.remove(name);
            }
            if (unwritten.containsKey(name)) {
              write(name); // a later event came meanwhile
            }
          });
    } catch (RejectedExecutionException closed) {
      writing.remove(name);
    }
  }
}
