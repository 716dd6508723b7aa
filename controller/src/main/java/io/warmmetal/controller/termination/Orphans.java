package io.warmmetal.controller.termination;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.warmmetal.controller.claims.NodeClaimWriter;
import io.warmmetal.controller.cloudprovider.CloudProvider;
import io.warmmetal.controller.cloudprovider.CloudProviderException;
import io.warmmetal.controller.cloudprovider.Instance;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Garbage collection, as Karpenter's, both ways. An instance launched for a NodeClaim that no
 * longer exists (a deposed leader's launch that finished after its claim was given up, a claim
 * removed by hand without its finalizer) holds a machine nobody will release: instances carrying a
 * NodeClaim-UID label whose claim is gone, and older than {@code grace} (two minutes; a launch in
 * flight has its claim, but this pass's list may predate it), are terminated. And a launched
 * NodeClaim whose instance is gone (terminated through the API, its machine failed) stands for
 * capacity that is not there: once launched more than {@link #LAUNCHED_GRACE} ago, it is deleted —
 * termination drains its Node, if any, and lets both go.
 */
public final class Orphans {
  private static final Logger LOG = LoggerFactory.getLogger(Orphans.class);
  public static final Duration GRACE = Duration.ofMinutes(2);
  public static final Duration EVERY = Duration.ofMinutes(1);

  /** How long a claim may have been launched before its instance must be listed. */
  static final Duration LAUNCHED_GRACE = Duration.ofSeconds(10);

  private final CloudProvider cloud;
  private final NodeClaimWriter writer;
  private final Clock clock;
  private final Duration grace;
  private final Duration every;
  private Instant lastRun = Instant.EPOCH;

  public Orphans(
      CloudProvider cloud, NodeClaimWriter writer, Clock clock, Duration grace, Duration every) {
    this.cloud = cloud;
    this.writer = writer;
    this.clock = clock;
    this.grace = grace;
    this.every = every;
  }

  /** Collects, at most once every {@code every}, through every node class's API. */
  public void reconcile(List<NodeClaim> claims, List<WarmMetalNodeClass> nodeClasses)
      throws Exception {
    Instant now = clock.instant();
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
      collectClaims(nodeClass, instances, claims, now);
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

  /**
   * Deletes the node class's launched claims whose instance its fleet no longer lists (neither
   * pending nor running).
   */
  private void collectClaims(
      WarmMetalNodeClass nodeClass, List<Instance> instances, List<NodeClaim> claims, Instant now) {
    Set<String> listed = instances.stream().map(Instance::providerId).collect(Collectors.toSet());
    for (NodeClaim claim : claims) {
      Condition launched =
          claim.getStatus() == null
              ? null
              : Conditions.get(claim.getStatus().conditions, Conditions.LAUNCHED);
      if (claim.getMetadata().getDeletionTimestamp() != null
          || claim.getSpec().nodeClassRef == null
          || !nodeClass.getMetadata().getName().equals(claim.getSpec().nodeClassRef.name)
          || launched == null
          || !"True".equals(launched.getStatus())
          || claim.getStatus().providerID == null
          || listed.contains(claim.getStatus().providerID)
          || launched.getLastTransitionTime() == null
          || Instant.parse(launched.getLastTransitionTime()).plus(LAUNCHED_GRACE).isAfter(now)) {
        continue;
      }
      LOG.info(
          "NodeClaim {}: its instance ({}) is gone: deleting it",
          claim.getMetadata().getName(),
          claim.getStatus().providerID);
      try {
        writer.delete(claim);
      } catch (KubernetesClientException e) {
        LOG.debug(
            "NodeClaim {} not deleted now ({})", claim.getMetadata().getName(), e.getMessage());
      }
    }
  }
}
