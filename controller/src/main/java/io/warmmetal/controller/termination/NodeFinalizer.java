package io.warmmetal.controller.termination;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.WellKnown;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code karpenter.sh/termination} finalizer on a Node, as upstream puts it there at
 * registration: a Node deleted by hand ({@code kubectl delete node}) stays until its NodeClaim's
 * termination has drained it and terminated its instance — rather than vanishing undrained while
 * the instance goes on running as capacity no one can use.
 */
public final class NodeFinalizer {
  private static final Logger LOG = LoggerFactory.getLogger(NodeFinalizer.class);

  private NodeFinalizer() {}

  public static boolean on(Node node) {
    return node.getMetadata().getFinalizers() != null
        && node.getMetadata().getFinalizers().contains(WellKnown.TERMINATION_FINALIZER);
  }

  /** Whether the Node is being deleted and waits for us. */
  public static boolean deleting(Node node) {
    return node.getMetadata().getDeletionTimestamp() != null && on(node);
  }

  /** Adds the finalizer to a Node about to be written. */
  public static void add(Node node) {
    if (!on(node)) {
      List<String> finalizers =
          new ArrayList<>(
              node.getMetadata().getFinalizers() == null
                  ? List.of()
                  : node.getMetadata().getFinalizers());
      finalizers.add(WellKnown.TERMINATION_FINALIZER);
      node.getMetadata().setFinalizers(finalizers);
    }
  }

  /** Deletes the Node and lets it go: its instance is terminated. */
  static void deleteAndRelease(KubernetesClient kube, Node node) {
    String name = node.getMetadata().getName();
    if (node.getMetadata().getDeletionTimestamp() == null) {
      kube.nodes().withName(name).delete();
    }
    if (on(node)) {
      release(kube, name);
    }
  }

  private static void release(KubernetesClient kube, String name) {
    try {
      kube.nodes()
          .withName(name)
          .edit(
              n -> {
                if (n.getMetadata().getFinalizers() != null) {
                  n.getMetadata()
                      .setFinalizers(
                          new ArrayList<>(
                              n.getMetadata().getFinalizers().stream()
                                  .filter(f -> !WellKnown.TERMINATION_FINALIZER.equals(f))
                                  .toList()));
                }
                return n;
              });
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404) {
        throw e; // gone already is done
      }
    }
  }

  /**
   * Lets go of Nodes being deleted that no NodeClaim of ours will terminate (its claim gone: its
   * finalizer removed by hand, say) — they would wait for ever.
   */
  public static void releaseUnclaimed(
      KubernetesClient kube, List<Node> nodes, List<NodeClaim> claims) {
    Set<String> claimed = new HashSet<>();
    for (NodeClaim claim : claims) {
      if (claim.getStatus() != null && claim.getStatus().providerID != null) {
        claimed.add(claim.getStatus().providerID);
      }
    }
    for (Node node : nodes) {
      if (deleting(node)
          && (node.getSpec().getProviderID() == null
              || !claimed.contains(node.getSpec().getProviderID()))) {
        LOG.info(
            "Node {}: deleted, and no NodeClaim of ours terminates it; its finalizer is removed",
            node.getMetadata().getName());
        release(kube, node.getMetadata().getName());
      }
    }
  }
}
