package io.warmmetal.controller.instances;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A launch's join says what the node class says of its cluster and of its kubelet. */
class JoinsTest {
  private static WarmMetalNodeClass nodeClass() {
    WarmMetalNodeClass nodeClass = new WarmMetalNodeClass();
    nodeClass.getMetadata().setName("default");
    nodeClass.getSpec().join = new WarmMetalNodeClass.Join();
    nodeClass.getSpec().join.apiServer = "10.0.0.1:6443";
    nodeClass.getSpec().join.caCertHash = "sha256:" + "ab".repeat(32);
    return nodeClass;
  }

  private static JsonNode join(WarmMetalNodeClass nodeClass) {
    return Joins.of(nodeClass, "abcdef.0123456789abcdef", Map.of(), List.of(), "v1.20.2");
  }

  @Test
  void theNodeClassesKubeletSettingsTravelWithTheJoin() {
    WarmMetalNodeClass nodeClass = nodeClass();
    assertThat(join(nodeClass).has("kubelet")).as("none set: none sent").isFalse();

    nodeClass.getSpec().kubelet = new WarmMetalNodeClass.Kubelet();
    nodeClass.getSpec().kubelet.maxPods = 58;
    nodeClass.getSpec().kubelet.kubeReserved = Map.of("memory", "512Mi");
    JsonNode kubelet = join(nodeClass).get("kubelet");
    assertThat(kubelet.get("maxPods").asInt()).isEqualTo(58);
    assertThat(kubelet.get("kubeReserved").get("memory").asText()).isEqualTo("512Mi");
    assertThat(kubelet.get("systemReserved").isEmpty()).isTrue();
  }
}
