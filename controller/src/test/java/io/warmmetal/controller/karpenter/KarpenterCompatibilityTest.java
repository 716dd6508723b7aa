package io.warmmetal.controller.karpenter;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import java.io.InputStream;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A NodePool written for Karpenter applies unchanged but for its nodeClassRef; the shipped CRDs serve the kinds. */
@EnableKubernetesMockClient(crud = true)
class KarpenterCompatibilityTest {
  KubernetesClient kube;

  private static String resource(String name) throws Exception {
    try (InputStream in = KarpenterCompatibilityTest.class.getClassLoader().getResourceAsStream(name)) {
      return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
  }

  @Test
  @SuppressWarnings("unchecked")
  void aKarpenterNodePoolReadsAndWritesBackEveryField() throws Exception {
    String yaml = resource("karpenter-nodepool.yaml");
    NodePool pool = Serialization.unmarshal(yaml, NodePool.class);
    assertThat(pool.getSpec().weight).isEqualTo(10);
    assertThat(pool.getSpec().template.spec.requirements).hasSize(4);
    assertThat(pool.getSpec().template.spec.requirements.get(2).getMinValues()).isEqualTo(2);
    assertThat(pool.getSpec().disruption.budgets.get(1).reasons).containsExactly("Drifted");
    assertThat(pool.getSpec().limits.get("memory").toString()).isEqualTo("1000Gi");

    // Nothing is lost on the way through the model.
    Map<String, Object> original = Serialization.unmarshal(yaml, Map.class);
    Map<String, Object> roundTrip = Serialization.unmarshal(Serialization.asYaml(pool), Map.class);
    assertThat(roundTrip.get("spec")).isEqualTo(original.get("spec"));
  }

  @Test
  void theShippedCrdsServeNodePoolsNodeClaimsAndNodeClasses() throws Exception {
    for (String crd : new String[] {"nodepools.karpenter.sh-v1.yml", "nodeclaims.karpenter.sh-v1.yml",
        "warmmetalnodeclasses.warmmetal.io-v1.yml"}) {
      CustomResourceDefinition definition = Serialization.unmarshal(resource("META-INF/fabric8/" + crd),
          CustomResourceDefinition.class);
      assertThat(definition.getSpec().getScope()).isEqualTo("Cluster");
      kube.apiextensions().v1().customResourceDefinitions().resource(definition).create();
    }
    NodePool pool = Serialization.unmarshal(resource("karpenter-nodepool.yaml"), NodePool.class);
    kube.resources(NodePool.class).resource(pool).create();
    assertThat(kube.resources(NodePool.class).withName("default").get().getSpec().template.spec.nodeClassRef.kind)
        .isEqualTo("WarmMetalNodeClass");

    NodeClaim claim = new NodeClaim();
    claim.getMetadata().setName("default-abcde");
    claim.getSpec().nodeClassRef = pool.getSpec().template.spec.nodeClassRef;
    claim.getSpec().requirements = pool.getSpec().template.spec.requirements;
    kube.resources(NodeClaim.class).resource(claim).create();
    assertThat(kube.resources(NodeClaim.class).withName("default-abcde").get().getSpec().requirements).hasSize(4);

    WarmMetalNodeClass nodeClass = new WarmMetalNodeClass();
    nodeClass.getMetadata().setName("default");
    nodeClass.getSpec().endpoint = "http://warmmetal-api.warmmetal-system:8080";
    nodeClass.getSpec().registrationTimeout = "2m";
    kube.resources(WarmMetalNodeClass.class).resource(nodeClass).create();
    assertThat(kube.resources(WarmMetalNodeClass.class).withName("default").get().getSpec().registrationTimeout)
        .isEqualTo("2m");
  }
}
