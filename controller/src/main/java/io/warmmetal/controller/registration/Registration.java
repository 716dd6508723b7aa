package io.warmmetal.controller.registration;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.provisioning.Conditions;
import io.warmmetal.controller.provisioning.Definitions;
import io.warmmetal.controller.provisioning.Provisioner;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A launched NodeClaim meets its Node, matched by providerID: Registered (the Node gets the pool's labels, the
 * unregistered taint comes off), then Initialized once the Node is Ready and its startup taints are gone.
 */
public final class Registration {
  private static final Logger LOG = LoggerFactory.getLogger(Registration.class);

  private final KubernetesClient kube;
  private final Definitions defs;

  public Registration(KubernetesClient kube, Definitions defs) {
    this.kube = kube;
    this.defs = defs;
  }

  public void reconcile(List<Node> nodes, List<NodeClaim> claims) {
    Map<String, Node> byProvider = new HashMap<>();
    for (Node n : nodes) {
      if (n.getSpec() != null && n.getSpec().getProviderID() != null) {
        byProvider.put(n.getSpec().getProviderID(), n);
      }
    }
    for (NodeClaim claim : claims) {
      if (claim.getStatus() == null || claim.getStatus().providerID == null
          || Conditions.isTrue(claim.getStatus().conditions, Conditions.INITIALIZED)) {
        continue;
      }
      Node node = byProvider.get(claim.getStatus().providerID);
      if (node != null) {
        try {
          advance(claim, node);
        } catch (RuntimeException e) {
          LOG.warn("NodeClaim {}: registering Node {} failed ({}); next pass", claim.getMetadata().getName(),
              node.getMetadata().getName(), e.getMessage());
        }
      }
    }
  }

  private void advance(NodeClaim claim, Node node) {
    boolean changed = false;
    Node current = node; // the informer's copy, or the one our edit returned
    if (!Conditions.isTrue(claim.getStatus().conditions, Conditions.REGISTERED)) {
      current = register(claim, node);
      claim.getStatus().nodeName = node.getMetadata().getName();
      claim.getStatus().capacity = node.getStatus() == null ? null : node.getStatus().getCapacity();
      claim.getStatus().allocatable = node.getStatus() == null ? null : node.getStatus().getAllocatable();
      Conditions.set(claim.getStatus().conditions, Conditions.REGISTERED, true, "Registered",
          "Node " + node.getMetadata().getName());
      changed = true;
    }
    if (ready(current) && noStartupTaints(claim, current)) {
      Conditions.set(claim.getStatus().conditions, Conditions.INITIALIZED, true, "Initialized", "Node is ready");
      changed = true;
      LOG.info("NodeClaim {} initialized: Node {}", claim.getMetadata().getName(), node.getMetadata().getName());
    }
    if (changed) {
      kube.resources(NodeClaim.class).resource(claim).updateStatus();
    }
  }

  /** Syncs the pool's labels (and the claim's) onto the Node and lifts the unregistered taint. */
  private Node register(NodeClaim claim, Node node) {
    String poolName = claim.getMetadata().getLabels().get(Provisioner.NODEPOOL_LABEL);
    NodePool pool = defs.pool(poolName);
    Node registered = editNode(node, n -> {
      Map<String, String> labels = new HashMap<>(n.getMetadata().getLabels() == null ? Map.of()
          : n.getMetadata().getLabels());
      if (pool != null && pool.getSpec().template.metadata.labels != null) {
        labels.putAll(pool.getSpec().template.metadata.labels);
      }
      labels.put(Provisioner.NODEPOOL_LABEL, poolName);
      labels.put(Provisioner.NODECLAIM_LABEL, claim.getMetadata().getName());
      n.getMetadata().setLabels(labels);
      List<Taint> taints = new ArrayList<>(n.getSpec().getTaints() == null ? List.of() : n.getSpec().getTaints());
      taints.removeIf(t -> Provisioner.UNREGISTERED_TAINT.equals(t.getKey()));
      n.getSpec().setTaints(taints);
      return n;
    });
    LOG.info("NodeClaim {} registered: Node {}", claim.getMetadata().getName(), node.getMetadata().getName());
    return registered;
  }

  /**
   * Changes the Node: one update from the informer's copy, guarded by its resourceVersion; if the kubelet changed it
   * meanwhile (409 Conflict), again from its latest version.
   */
  private Node editNode(Node cached, java.util.function.UnaryOperator<Node> change) {
    try {
      Node copy = io.fabric8.kubernetes.client.utils.Serialization.clone(cached);
      return kube.nodes().resource(change.apply(copy)).update();
    } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
      if (e.getCode() != 409) {
        throw e;
      }
    }
    for (int attempt = 1; ; attempt++) {
      try {
        return kube.nodes().withName(cached.getMetadata().getName()).edit(change);
      } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
        if (e.getCode() != 409 || attempt == 5) {
          throw e;
        }
      }
    }
  }

  private static boolean ready(Node node) {
    if (node == null || node.getStatus() == null || node.getStatus().getConditions() == null) {
      return false;
    }
    for (NodeCondition c : node.getStatus().getConditions()) {
      if ("Ready".equals(c.getType()) && "True".equals(c.getStatus())) {
        return true;
      }
    }
    return false;
  }

  private static boolean noStartupTaints(NodeClaim claim, Node node) {
    List<Taint> taints = node.getSpec().getTaints() == null ? List.of() : node.getSpec().getTaints();
    return taints.stream().noneMatch(t -> Provisioner.UNREGISTERED_TAINT.equals(t.getKey())
        || claim.getSpec().startupTaints.stream().anyMatch(s -> s.getKey().equals(t.getKey())));
  }
}
