package io.warmmetal.controller.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.karpenter.Requirement;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class InstanceTypesTest {

  @Test
  void
      aPoolsNodesGetItsTemplateLabelsItsNameAndTheSingleValuesOfRequirementsOnKeysNoShapeDefines() {
    NodePool pool = new NodePool();
    pool.getMetadata().setName("ml");
    pool.getSpec().template.metadata.labels = Map.of("env", "prod");
    pool.getSpec().template.spec.requirements =
        List.of(
            new Requirement(
                "team", "In", List.of("ml")), // a key of the team's own: pods may select it
            new Requirement(
                "tier", "In", List.of("a", "b")), // more than one value: no label to choose
            new Requirement(
                "node.kubernetes.io/instance-type",
                "In",
                List.of("x86-16c-64g")), // the shape's own
            new Requirement(
                "topology.kubernetes.io/zone",
                "In",
                List.of("rack-1")), // the machine's, not the pool's
            new Requirement("gpu", "Exists", List.of()));
    assertThat(InstanceTypes.poolLabels(pool))
        .containsExactlyInAnyOrderEntriesOf(
            Map.of("env", "prod", "team", "ml", "karpenter.sh/nodepool", "ml"));
  }
}
