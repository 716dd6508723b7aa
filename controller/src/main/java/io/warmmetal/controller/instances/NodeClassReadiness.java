package io.warmmetal.controller.instances;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.warmmetal.controller.cloudprovider.CloudProvider;
import io.warmmetal.controller.cloudprovider.CloudProviderException;
import io.warmmetal.controller.cloudprovider.CloudProviderException.NodeClassNotReady;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
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
 * credentials Secret readable and its instances API answering with them; and its {@code preJoined}
 * status to its pre-joined standby nodes as last counted (the one writer of the status). Checked
 * when the node class changes and otherwise at most every {@link #EVERY}; NodePools read it into
 * their {@code NodeClassReady} condition.
 */
public final class NodeClassReadiness {
  private static final Logger LOG = LoggerFactory.getLogger(NodeClassReadiness.class);
  static final Duration EVERY = Duration.ofSeconds(15);

  private final KubernetesClient kube;
  private final CloudProvider cloud;
  private final Map<String, Checked> checked = new ConcurrentHashMap<>();
  private final Function<String, List<WarmMetalNodeClass.PreJoinedStatus>> preJoined;

  /**
   * @param preJoined each node class's pre-joined standby nodes as last counted (null: it keeps
   *     none), written into its status
   */
  public NodeClassReadiness(
      KubernetesClient kube,
      CloudProvider cloud,
      Function<String, List<WarmMetalNodeClass.PreJoinedStatus>> preJoined) {
    this.kube = kube;
    this.cloud = cloud;
    this.preJoined = preJoined;
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
      List<WarmMetalNodeClass.PreJoinedStatus> standby = preJoined.apply(name);
      boolean standbyChanged =
          !Objects.equals(
              Serialization.asJson(standby),
              Serialization.asJson(
                  nodeClass.getStatus() == null ? null : nodeClass.getStatus().preJoined));
      if (hasReady
          && !standbyChanged
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
      status.preJoined = standby;
      boolean changed = judge(nodeClass, status) | standbyChanged;
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
      cloud.check(nodeClass);
      return Conditions.set(status.conditions, Conditions.READY, true, Conditions.READY, "");
    } catch (NodeClassNotReady e) {
      return Conditions.set(
          status.conditions, Conditions.READY, false, "CredentialsUnavailable", e.getMessage());
    } catch (CloudProviderException e) {
      return Conditions.set(
          status.conditions,
          Conditions.READY,
          false,
          "InstancesAPIUnavailable",
          spec.endpoint + ": " + e.getMessage());
    }
  }
}
