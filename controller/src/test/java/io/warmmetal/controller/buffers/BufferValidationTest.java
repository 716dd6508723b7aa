package io.warmmetal.controller.buffers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.ValidationRule;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The rules an API server of 1.25+ holds a CapacityBuffer to by the CRD's CEL, held by the
 * controller itself (the test cluster's 1.20 drops them), with the CRD's own messages.
 */
class BufferValidationTest {
  static CustomResourceDefinition shippedCrd() throws Exception {
    try (InputStream in =
        Files.newInputStream(
            Path.of("..", "deploy", "crds", "autoscaling.x-k8s.io_capacitybuffers.yaml"))) {
      return Serialization.unmarshal(in, CustomResourceDefinition.class);
    }
  }

  @Test
  void theRulesAreTheShippedCrdsCelRulesWithTheirMessages() throws Exception {
    var v1beta1 =
        shippedCrd().getSpec().getVersions().stream()
            .filter(v -> v.getName().equals("v1beta1"))
            .findFirst()
            .orElseThrow();
    List<ValidationRule> rules =
        v1beta1
            .getSchema()
            .getOpenAPIV3Schema()
            .getProperties()
            .get("spec")
            .getXKubernetesValidations();
    assertThat(rules)
        .extracting(ValidationRule::getRule, ValidationRule::getMessage)
        .containsExactlyElementsOf(
            BufferValidation.CEL.stream().map(r -> tuple(r.cel(), r.message())).toList());
  }

  private static CapacityBuffer.Spec spec() {
    return new CapacityBuffer.Spec();
  }

  private static CapacityBuffer.ScalableRef deployment() {
    CapacityBuffer.ScalableRef ref = new CapacityBuffer.ScalableRef();
    ref.apiGroup = "apps";
    ref.kind = "Deployment";
    ref.name = "web";
    return ref;
  }

  @Test
  void aPodTemplateBufferNeedsReplicasOrLimits() {
    CapacityBuffer.Spec spec = spec();
    spec.podTemplateRef = new CapacityBuffer.LocalObjectRef("t");
    assertThat(BufferValidation.problems(spec))
        .containsExactly("If X is set, replicas or limits must also be set");
    // A percentage alone is no size for a PodTemplate buffer (it is a share of a workload's
    // replicas): the same rule refuses it.
    spec.percentage = 20;
    assertThat(BufferValidation.problems(spec))
        .containsExactly("If X is set, replicas or limits must also be set");
    spec.replicas = 2;
    assertThat(BufferValidation.problems(spec)).isEmpty();
    spec.replicas = null;
    spec.limits = Map.of("cpu", new Quantity("4"));
    assertThat(BufferValidation.problems(spec)).isEmpty();
  }

  @Test
  void exactlyOneOfPodTemplateRefAndScalableRef() {
    CapacityBuffer.Spec both = spec();
    both.podTemplateRef = new CapacityBuffer.LocalObjectRef("t");
    both.scalableRef = deployment();
    both.replicas = 1;
    assertThat(BufferValidation.problems(both))
        .containsExactly("You must define either PodTemplateRef or ScalableRef, but not both");

    CapacityBuffer.Spec neither = spec();
    neither.replicas = 1;
    assertThat(BufferValidation.problems(neither))
        .containsExactly("Neither podTemplateRef nor scalableRef is set");

    CapacityBuffer.Spec scalable = spec();
    scalable.scalableRef = deployment();
    assertThat(BufferValidation.problems(scalable))
        .isEmpty(); // its size may come from the workload
  }
}
