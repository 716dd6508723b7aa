package io.warmmetal.controller.claims;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one writer of NodeClaims: every create, update, status write and delete of the controller
 * goes through here, and what the API server answers is laid over the informer's view ({@link
 * NodeClaims}) so the next read sees it. Writes carry the resourceVersion they were read at — a
 * claim changed since answers 409 Conflict, and the caller reads again — except the read-modify-
 * write helpers, which re-read and retry a few times themselves.
 */
public final class NodeClaimWriter {
  private static final Logger LOG = LoggerFactory.getLogger(NodeClaimWriter.class);
  private static final int ATTEMPTS = 5;

  private final KubernetesClient kube;
  private final NodeClaims claims;

  public NodeClaimWriter(KubernetesClient kube, NodeClaims claims) {
    this.kube = kube;
    this.claims = claims;
  }

  public NodeClaim create(NodeClaim claim) {
    NodeClaim created = kube.resources(NodeClaim.class).resource(claim).create();
    claims.wrote(created);
    return created;
  }

  /** Writes metadata and spec (not status) as read at its resourceVersion. */
  public NodeClaim update(NodeClaim claim) {
    NodeClaim updated = kube.resources(NodeClaim.class).resource(claim).update();
    claims.wrote(updated);
    return updated;
  }

  /** Writes the status as read at its resourceVersion (409 Conflict if changed since). */
  public NodeClaim updateStatus(NodeClaim claim) {
    NodeClaim updated = kube.resources(NodeClaim.class).resource(claim).updateStatus();
    claims.wrote(updated);
    return updated;
  }

  /**
   * Changes the status of the claim as the API server has it now: read, changed, written — again
   * when another write came between.
   */
  public NodeClaim editStatus(String name, UnaryOperator<NodeClaim> change) {
    return retrying(
        () -> {
          NodeClaim written = kube.resources(NodeClaim.class).withName(name).editStatus(change);
          claims.wrote(written);
          return written;
        });
  }

  /** Changes the claim (not its status) as the API server has it now, as {@link #editStatus}. */
  public NodeClaim edit(String name, UnaryOperator<NodeClaim> change) {
    return retrying(
        () -> {
          NodeClaim written = kube.resources(NodeClaim.class).withName(name).edit(change);
          claims.wrote(written);
          return written;
        });
  }

  /** Sets (or, for a null value, removes) these annotations: a merge patch, no version needed. */
  public NodeClaim annotate(NodeClaim claim, Map<String, String> annotations) {
    NodeClaim written =
        kube.resources(NodeClaim.class)
            .withName(claim.getMetadata().getName())
            .patch(
                PatchContext.of(PatchType.JSON_MERGE),
                Serialization.asJson(Map.of("metadata", Map.of("annotations", annotations))));
    claims.wrote(written);
    return written;
  }

  /**
   * Writes one condition when it differs from what the claim shows (status null: removes it): read,
   * then changed and written, so a status another step wrote meanwhile is not overwritten. A failed
   * write is left to the next pass; the claim read is updated with what was written.
   */
  public void condition(
      NodeClaim claim, String type, String status, String reason, String message) {
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
          editStatus(
              claim.getMetadata().getName(),
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
      LOG.debug(
          "NodeClaim {}: {} not written ({}); next pass",
          claim.getMetadata().getName(),
          type,
          e.getMessage());
    }
  }

  /**
   * Merges the claim's labels and annotations into the API server's (a JSON merge patch: no read
   * first, no version needed; what others set meanwhile stays).
   */
  public NodeClaim mergeLabelsAndAnnotations(NodeClaim claim) {
    Map<String, Object> metadata = new HashMap<>();
    metadata.put("labels", claim.getMetadata().getLabels());
    metadata.put("annotations", claim.getMetadata().getAnnotations());
    NodeClaim written =
        kube.resources(NodeClaim.class)
            .withName(claim.getMetadata().getName())
            .patch(
                PatchContext.of(PatchType.JSON_MERGE),
                Serialization.asJson(Map.of("metadata", metadata)));
    claims.wrote(written);
    return written;
  }

  /**
   * Merges the claim's status into the API server's (a JSON merge patch of the status subresource:
   * its conditions as a whole). For a status no one else writes at the same time: a launch's.
   */
  public NodeClaim mergeStatus(NodeClaim claim) {
    NodeClaim written =
        kube.resources(NodeClaim.class)
            .withName(claim.getMetadata().getName())
            .subresource("status")
            .patch(
                PatchContext.of(PatchType.JSON_MERGE),
                Serialization.asJson(Map.of("status", claim.getStatus())));
    claims.wrote(written);
    return written;
  }

  /** Deletes the claim (its finalizer keeps it until termination is done). */
  public void delete(NodeClaim claim) {
    List<?> deleted = kube.resources(NodeClaim.class).resource(claim).delete();
    claims.deleting(claim);
    if (deleted.isEmpty()) {
      claims.seen(claim, true); // gone already
    }
  }

  private interface Write {
    NodeClaim run();
  }

  private static NodeClaim retrying(Write write) {
    for (int attempt = 1; ; attempt++) {
      try {
        return write.run();
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409 || attempt == ATTEMPTS) {
          throw e;
        }
      }
    }
  }
}
