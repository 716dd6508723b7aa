package io.warmmetal.controller.karpenter;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Objects;
import org.slf4j.LoggerFactory;

/**
 * Writes one condition of a NodeClaim's status when it differs from what the claim shows (read,
 * then patched, so a status another step wrote this pass is not overwritten); a failed write is
 * tried again next pass.
 */
public final class ClaimConditions {
  private ClaimConditions() {}

  /** Sets the condition ({@code status} null: removes it). */
  public static void write(
      KubernetesClient kube,
      NodeClaim claim,
      String type,
      String status,
      String reason,
      String message) {
    Condition now =
        claim.getStatus() == null ? null : Conditions.get(claim.getStatus().conditions, type);
    boolean same =
        status == null
            ? now == null
            : now != null
                && status.equals(now.getStatus())
                && Objects.equals(reason, now.getReason());
    if (same || claim.getStatus() == null) {
      return;
    }
    try {
      NodeClaim written =
          kube.resources(NodeClaim.class)
              .withName(claim.getMetadata().getName())
              .editStatus(
                  c -> {
                    if (status == null) {
                      c.getStatus().conditions.removeIf(x -> type.equals(x.getType()));
                    } else {
                      Conditions.set(c.getStatus().conditions, type, status, reason, message);
                    }
                    return c;
                  });
      claim.getStatus().conditions = written.getStatus().conditions;
    } catch (KubernetesClientException e) {
      LoggerFactory.getLogger(ClaimConditions.class)
          .debug(
              "NodeClaim {}: {} not written ({}); next pass",
              claim.getMetadata().getName(),
              type,
              e.getMessage());
    }
  }
}
