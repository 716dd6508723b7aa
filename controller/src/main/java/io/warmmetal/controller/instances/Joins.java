package io.warmmetal.controller.instances;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.Taint;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.protocol.MalformedFrame;
import io.warmmetal.protocol.commands.KubeletSettings;
import io.warmmetal.protocol.commands.KubernetesJoin;
import java.util.List;
import java.util.Map;

/** A launch's {@code kubernetes}: how the machine joins the node class's cluster. */
public final class Joins {
  private Joins() {}

  /**
   * @param bootstrapToken the launch's own ({@link BootstrapTokens})
   * @param controlPlaneVersion the cluster's, or null when it could not be read
   */
  public static JsonNode of(
      WarmMetalNodeClass nodeClass,
      String bootstrapToken,
      Map<String, String> nodeLabels,
      List<Taint> taints,
      String controlPlaneVersion) {
    return InstancesApi.tree(
        new KubernetesJoin(
                nodeClass.getSpec().join.apiServer,
                nodeClass.getSpec().join.caCertHash,
                bootstrapToken,
                nodeLabels,
                taints.stream()
                    .map(
                        t ->
                            new io.warmmetal.protocol.commands.Taint(
                                t.getKey(),
                                t.getValue() == null || t.getValue().isEmpty()
                                    ? null
                                    : t.getValue(),
                                t.getEffect()))
                    .toList(),
                controlPlaneVersion,
                kubelet(nodeClass))
            .toJson());
  }

  /**
   * The node class's kubelet settings as the join passes them (null: none).
   *
   * @throws MalformedFrame if the node class's settings are not ones a kubelet takes
   */
  static KubeletSettings kubelet(WarmMetalNodeClass nodeClass) {
    var kubelet = nodeClass.getSpec().kubelet;
    return kubelet == null
        ? null
        : new KubeletSettings(kubelet.maxPods, kubelet.systemReserved, kubelet.kubeReserved);
  }
}
