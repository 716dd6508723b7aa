package io.warmmetal.controller.disruption;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.warmmetal.controller.claims.NodeClaimWriter;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.Hashes;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.Requirement;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.state.Definitions;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Marks NodeClaims {@code Drifted} as upstream's drift controller does, with its reasons: {@code
 * NodePoolDrifted} (the NodePool's template hash is not the one the claim was made from, same hash
 * version), {@code RequirementsDrifted} (the claim's labels no longer meet the NodePool's
 * requirements) and {@code NodeClassDrifted} (the node class's hash changed: how nodes join, their
 * kubelet, their images) — and, as upstream's AWS provider reports {@code AMIDrift}, {@code
 * ImageDrift}: the node class names a node image and the claim's machine booted another ({@code
 * status.imageID}). The mark goes when the cause does. {@link DriftMethod} takes drifted nodes
 * away, within budgets.
 */
final class Drift {
  private static final Logger LOG = LoggerFactory.getLogger(Drift.class);

  private final NodeClaimWriter writer;
  private final Definitions defs;

  Drift(NodeClaimWriter writer, Definitions defs) {
    this.writer = writer;
    this.defs = defs;
  }

  /** Marks or unmarks each launched claim. */
  void reconcile(List<NodeClaim> claims) {
    Map<NodePool, String> poolHashes = new IdentityHashMap<>(); // once per pass, not per claim
    Map<WarmMetalNodeClass, String> classHashes = new IdentityHashMap<>();
    for (NodeClaim claim : claims) {
      if (claim.getMetadata().getDeletionTimestamp() != null
          || claim.getStatus() == null
          || !Conditions.isTrue(claim.getStatus().conditions, Conditions.LAUNCHED)) {
        continue;
      }
      NodePool pool = defs.pool(claim.getMetadata().getLabels().get(WellKnown.NODEPOOL_LABEL));
      if (pool == null) {
        continue; // a NodePool gone or invalid: nothing to compare with
      }
      WarmMetalNodeClass nodeClass = defs.nodeClass(pool.getSpec().template.spec);
      String reason =
          reason(
              claim,
              pool,
              poolHashes.computeIfAbsent(pool, Hashes::nodePool),
              nodeClass == null
                  ? null
                  : classHashes.computeIfAbsent(nodeClass, WarmMetalNodeClass::hash),
              nodeClass == null ? null : nodeClass.getSpec().image);
      boolean changed;
      if (reason != null) {
        changed =
            Conditions.set(claim.getStatus().conditions, Conditions.DRIFTED, true, reason, reason);
      } else {
        changed =
            claim.getStatus().conditions.removeIf(c -> Conditions.DRIFTED.equals(c.getType()));
      }
      if (changed) {
        try {
          writer.updateStatus(claim);
          if (reason != null) {
            LOG.info("NodeClaim {} drifted: {}", claim.getMetadata().getName(), reason);
          }
        } catch (KubernetesClientException e) {
          LOG.debug(
              "NodeClaim {}: drift not recorded ({}); next pass",
              claim.getMetadata().getName(),
              e.getMessage());
        }
      }
    }
  }

  static boolean drifted(NodeClaim claim) {
    return claim.getStatus() != null
        && Conditions.isTrue(claim.getStatus().conditions, Conditions.DRIFTED);
  }

  /** Why the claim has drifted from its NodePool and node class; null if it has not. */
  static String reason(NodeClaim claim, NodePool pool, WarmMetalNodeClass nodeClass) {
    return reason(
        claim,
        pool,
        Hashes.nodePool(pool),
        nodeClass == null ? null : nodeClass.hash(),
        nodeClass == null ? null : nodeClass.getSpec().image);
  }

  /**
   * As above, with the NodePool's and node class's hashes worked out already (null: no node class)
   * and the image the node class names (null: any).
   */
  static String reason(
      NodeClaim claim, NodePool pool, String poolHash, String classHash, String image) {
    Map<String, String> annotations =
        claim.getMetadata().getAnnotations() == null
            ? Map.of()
            : claim.getMetadata().getAnnotations();
    String hash = annotations.get(Hashes.NODEPOOL_HASH_ANNOTATION);
    if (hash != null
        && Hashes.NODEPOOL_HASH_VERSION.equals(
            annotations.get(Hashes.NODEPOOL_HASH_VERSION_ANNOTATION))
        && !hash.equals(poolHash)) {
      return "NodePoolDrifted";
    }
    Map<String, String> labels = claim.getMetadata().getLabels();
    for (Requirement r : pool.getSpec().template.spec.requirements) {
      // Keys the claim carries are compared; one it does not carry (another provider's) is not held
      // against it.
      if (labels.containsKey(r.getKey()) && !r.matches(labels)) {
        return "RequirementsDrifted";
      }
    }
    String stamped = annotations.get(Hashes.NODECLASS_HASH_ANNOTATION);
    if (classHash != null && stamped != null && !stamped.equals(classHash)) {
      return "NodeClassDrifted";
    }
    String booted = claim.getStatus() == null ? null : claim.getStatus().imageID;
    if (image != null && !image.isBlank() && booted != null && !booted.equals(image)) {
      return "ImageDrift";
    }
    return null;
  }
}
