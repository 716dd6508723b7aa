package io.warmmetal.controller.nodeclass;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.warmmetal.controller.instances.InstancesApi;
import io.warmmetal.controller.karpenter.Conditions;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps each WarmMetalNodeClass's {@code Ready} condition true to what a launch would meet: its
 * credentials Secret readable and its instances API answering with them. Checked when the node
 * class changes and otherwise at most every {@link #EVERY}; NodePools read it into their {@code
 * NodeClassReady} condition.
 */
public final class NodeClassReadiness {
  private static final Logger LOG = LoggerFactory.getLogger(NodeClassReadiness.class);
  static final Duration EVERY = Duration.ofSeconds(15);

  private final KubernetesClient kube;
  private final Function<WarmMetalNodeClass, InstancesApi> apis;
  private final Map<String, Checked> checked = new ConcurrentHashMap<>();

  public NodeClassReadiness(
      KubernetesClient kube, Function<WarmMetalNodeClass, InstancesApi> apis) {
    this.kube = kube;
    this.apis = apis;
  }

  private record Checked(Long generation, Instant at) {}

  public void reconcile(List<WarmMetalNodeClass> nodeClasses) {
    Instant now = Instant.now();
    for (WarmMetalNodeClass nodeClass : nodeClasses) {
      String name = nodeClass.getMetadata().getName();
      Checked last = checked.get(name);
      Long generation = nodeClass.getMetadata().getGeneration();
      boolean hasReady =
          nodeClass.getStatus() != null
              && Conditions.get(nodeClass.getStatus().conditions, Conditions.READY) != null;
      if (hasReady
          && last != null
          && Objects.equals(last.generation(), generation)
          && last.at().plus(EVERY).isAfter(now)) {
        continue;
      }
      checked.put(name, new Checked(generation, now));
      WarmMetalNodeClass.Status status = new WarmMetalNodeClass.Status();
      if (nodeClass.getStatus() != null) {
        status.conditions.addAll(nodeClass.getStatus().conditions);
      }
      boolean changed = judge(nodeClass, status);
      if (changed) {
        nodeClass.setStatus(status);
        try {
          kube.resources(WarmMetalNodeClass.class).resource(nodeClass).updateStatus();
        } catch (KubernetesClientException e) {
          checked.remove(name); // a conflict or a blip: again next pass
          LOG.warn("WarmMetalNodeClass {}: status not written ({})", name, e.getMessage());
        }
      }
    }
    checked.keySet().retainAll(nodeClasses.stream().map(c -> c.getMetadata().getName()).toList());
  }

  private boolean judge(WarmMetalNodeClass nodeClass, WarmMetalNodeClass.Status status) {
    var spec = nodeClass.getSpec();
    if (spec == null
        || spec.endpoint == null
        || spec.endpoint.isBlank()
        || spec.credentialsSecretRef == null) {
      return Conditions.set(
          status.conditions,
          Conditions.READY,
          false,
          "InvalidSpec",
          "spec.endpoint and spec.credentialsSecretRef are required");
    }
    try {
      apis.apply(nodeClass).shapes();
      return Conditions.set(status.conditions, Conditions.READY, true, Conditions.READY, "");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (IllegalStateException e) {
      return Conditions.set(
          status.conditions, Conditions.READY, false, "CredentialsUnavailable", e.getMessage());
    } catch (Exception e) {
      return Conditions.set(
          status.conditions,
          Conditions.READY,
          false,
          "InstancesAPIUnavailable",
          spec.endpoint + ": " + e.getMessage());
    }
  }
}
