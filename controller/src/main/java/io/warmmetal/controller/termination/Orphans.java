package io.warmmetal.controller.termination;

import io.warmmetal.controller.cloudprovider.CloudProvider;
import io.warmmetal.controller.cloudprovider.CloudProviderException;
import io.warmmetal.controller.cloudprovider.Instance;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Garbage collection, as Karpenter's: an instance launched for a NodeClaim that no longer exists (a
 * deposed leader's launch that finished after its claim was given up, a claim removed by hand
 * without its finalizer) holds a machine nobody will release. Instances carrying a NodeClaim-UID
 * label whose claim is gone, and older than {@code grace} (two minutes; a launch in flight has its
 * claim, but this pass's list may predate it), are terminated.
 */
public final class Orphans {
  private static final Logger LOG = LoggerFactory.getLogger(Orphans.class);
  public static final Duration GRACE = Duration.ofMinutes(2);
  public static final Duration EVERY = Duration.ofMinutes(1);

  private final CloudProvider cloud;
  private final Duration grace;
  private final Duration every;
  private Instant lastRun = Instant.EPOCH;

  public Orphans(CloudProvider cloud, Duration grace, Duration every) {
    this.cloud = cloud;
    this.grace = grace;
    this.every = every;
  }

  /** Collects, at most once every {@code every}, through every node class's API. */
  public void reconcile(List<NodeClaim> claims, List<WarmMetalNodeClass> nodeClasses)
      throws Exception {
    Instant now = Instant.now();
    if (lastRun.plus(every).isAfter(now)) {
      return;
    }
    lastRun = now;
    Set<String> live =
        claims.stream().map(c -> c.getMetadata().getUid()).collect(Collectors.toSet());
    Set<String> seen = new HashSet<>();
    for (WarmMetalNodeClass nodeClass : nodeClasses) {
      List<Instance> instances;
      try {
        instances = cloud.list(nodeClass);
      } catch (CloudProviderException e) {
        LOG.debug(
            "WarmMetalNodeClass {}: instances not listed ({})",
            nodeClass.getMetadata().getName(),
            e.getMessage());
        continue;
      }
      for (Instance instance : instances) {
        String uid = instance.label(WellKnown.NODECLAIM_UID_LABEL);
        // Node classes sharing one API and token list the same instances: each is judged once.
        if (seen.add(instance.id())
            && !live.contains(uid)
            && !instance.createdAt().plus(grace).isAfter(now)) {
          LOG.info(
              "Instance {} was launched for NodeClaim {}, which is gone: terminating it",
              instance.id(),
              uid);
          try {
            cloud.terminate(nodeClass, instance.id());
          } catch (CloudProviderException e) {
            LOG.debug("Instance {} not terminated now ({})", instance.id(), e.getMessage());
          }
        }
      }
    }
  }
}
