package io.warmmetal.controller.karpenter;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A NodePool written for Karpenter applies unchanged but for its nodeClassRef; the shipped CRDs
 * serve the kinds.
 */
@EnableKubernetesMockClient(crud = true)
class KarpenterCompatibilityTest {
  private static final Path CRDS = Path.of("..", "deploy", "crds");
  KubernetesClient kube;

  private static String resource(String name) throws Exception {
    try (InputStream in =
        KarpenterCompatibilityTest.class.getClassLoader().getResourceAsStream(name)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
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

  /**
   * Upstream's NodeOverlay example (its docs), a field of each kind: read and written back whole.
   */
  @Test
  @SuppressWarnings("unchecked")
  void aKarpenterNodeOverlayReadsAndWritesBackEveryField() throws Exception {
    String yaml = resource("karpenter-nodeoverlay.yaml");
    NodeOverlay overlay = Serialization.unmarshal(yaml, NodeOverlay.class);
    assertThat(overlay.weight()).isEqualTo(10);
    assertThat(overlay.getSpec().requirements).hasSize(3);
    assertThat(overlay.getSpec().capacity.get("hugepages-1Gi").toString()).isEqualTo("2Gi");
    Map<String, Object> original = Serialization.unmarshal(yaml, Map.class);
    Map<String, Object> roundTrip =
        Serialization.unmarshal(Serialization.asYaml(overlay), Map.class);
    assertThat(roundTrip.get("spec")).isEqualTo(original.get("spec"));
  }

  /**
   * Karpenter's CRDs are upstream's, verbatim (their header says from where), all of one upstream
   * commit: the kinds' schemas and CEL rules agree with each other as upstream released them.
   */
  @Test
  void theKarpenterCrdsAreUpstreamsVerbatimAtOneCommit() throws Exception {
    List<String> pins = new ArrayList<>();
    for (String crd :
        List.of(
            "karpenter.sh_nodepools.yaml",
            "karpenter.sh_nodeclaims.yaml",
            "karpenter.sh_nodeoverlays.yaml")) {
      String first = Files.readAllLines(CRDS.resolve(crd)).get(0);
      assertThat(first)
          .as(crd)
          .startsWith(
              "# Karpenter's own CRD, verbatim: kubernetes-sigs/karpenter pkg/apis/crds/"
                  + crd
                  + " at ");
      pins.add(first.substring(first.lastIndexOf(' ') + 1));
      assertThat(shipped(crd).getSpec().getGroup()).isEqualTo("karpenter.sh");
    }
    assertThat(pins).as("upstream commits the CRDs are from").containsOnly(pins.get(0));
  }

  private static CustomResourceDefinition shipped(String file) throws Exception {
    try (InputStream in = Files.newInputStream(CRDS.resolve(file))) {
      return Serialization.unmarshal(in, CustomResourceDefinition.class);
    }
  }

  /**
   * Every field of the upstream schemas the controller reads and writes — Karpenter's NodePool and
   * NodeClaim, SIG Autoscaling's CapacityBuffer (each version it serves) — spec and status, has a
   * place in the model: nothing a user writes is dropped on the way through the controller, and
   * every status field upstream shows can be written.
   */
  @ParameterizedTest
  @CsvSource({
    "karpenter.sh_nodepools.yaml, io.warmmetal.controller.karpenter.NodePool",
    "karpenter.sh_nodeclaims.yaml, io.warmmetal.controller.karpenter.NodeClaim",
    "karpenter.sh_nodeoverlays.yaml, io.warmmetal.controller.karpenter.NodeOverlay",
    "autoscaling.x-k8s.io_capacitybuffers.yaml, io.warmmetal.controller.buffers.CapacityBuffer"
  })
  void theModelHoldsEveryFieldOfUpstreamsSchema(String file, Class<?> model) throws Exception {
    var mapper = new ObjectMapper();
    List<String> missing = new ArrayList<>();
    for (var version : shipped(file).getSpec().getVersions()) {
      var schema = version.getSchema().getOpenAPIV3Schema();
      for (String part : List.of("spec", "status")) {
        var property = properties(mapper, mapper.constructType(model)).get(part);
        assertThat(property).as(part).isNotNull();
        missing(
            mapper,
            schema.getProperties().get(part),
            property,
            version.getName() + ":" + part,
            missing);
      }
    }
    assertThat(missing).as("fields of upstream's schema the model has no place for").isEmpty();
  }

  private static Map<String, JavaType> properties(ObjectMapper mapper, JavaType type) {
    Map<String, JavaType> names = new HashMap<>();
    mapper
        .getDeserializationConfig()
        .introspect(type)
        .findProperties()
        .forEach(p -> names.put(p.getName(), p.getPrimaryType()));
    return names;
  }

  private static void missing(
      ObjectMapper mapper,
      JSONSchemaProps schema,
      JavaType type,
      String path,
      List<String> missing) {
    if (type.isMapLikeType() || type.getRawClass() == Object.class) {
      return; // labels, limits, resources: any key
    }
    if (schema.getItems() != null && type.isCollectionLikeType()) {
      missing(mapper, schema.getItems().getSchema(), type.getContentType(), path + "[]", missing);
      return;
    }
    if (schema.getProperties() == null || schema.getProperties().isEmpty()) {
      return;
    }
    Map<String, JavaType> fields = properties(mapper, type);
    schema
        .getProperties()
        .forEach(
            (name, child) -> {
              if (!fields.containsKey(name)) {
                missing.add(path + "." + name);
              } else {
                missing(mapper, child, fields.get(name), path + "." + name, missing);
              }
            });
  }

  @Test
  void theShippedCrdsServeNodePoolsNodeClaimsAndNodeClasses() throws Exception {
    for (String crd :
        new String[] {
          "karpenter.sh_nodepools.yaml",
          "karpenter.sh_nodeclaims.yaml",
          "karpenter.sh_nodeoverlays.yaml",
          "warmmetalnodeclasses.warmmetal.io-v1.yml"
        }) {
      CustomResourceDefinition definition = shipped(crd);
      assertThat(definition.getSpec().getScope()).isEqualTo("Cluster");
      kube.apiextensions().v1().customResourceDefinitions().resource(definition).create();
    }
    NodePool pool = Serialization.unmarshal(resource("karpenter-nodepool.yaml"), NodePool.class);
    kube.resources(NodePool.class).resource(pool).create();
    assertThat(
            kube.resources(NodePool.class)
                .withName("default")
                .get()
                .getSpec()
                .template
                .spec
                .nodeClassRef
                .kind)
        .isEqualTo("WarmMetalNodeClass");

    NodeClaim claim = new NodeClaim();
    claim.getMetadata().setName("default-abcde");
    claim.getSpec().nodeClassRef = pool.getSpec().template.spec.nodeClassRef;
    claim.getSpec().requirements = pool.getSpec().template.spec.requirements;
    kube.resources(NodeClaim.class).resource(claim).create();
    assertThat(
            kube.resources(NodeClaim.class).withName("default-abcde").get().getSpec().requirements)
        .hasSize(4);

    NodeOverlay overlay =
        Serialization.unmarshal(resource("karpenter-nodeoverlay.yaml"), NodeOverlay.class);
    kube.resources(NodeOverlay.class).resource(overlay).create();
    assertThat(kube.resources(NodeOverlay.class).withName("example-overlay").get().getSpec().price)
        .isEqualTo("5.00");

    WarmMetalNodeClass nodeClass = new WarmMetalNodeClass();
    nodeClass.getMetadata().setName("default");
    nodeClass.getSpec().endpoint = "http://warmmetal-api.warmmetal-system:8080";
    nodeClass.getSpec().registrationTimeout = "2m";
    kube.resources(WarmMetalNodeClass.class).resource(nodeClass).create();
    assertThat(
            kube.resources(WarmMetalNodeClass.class)
                .withName("default")
                .get()
                .getSpec()
                .registrationTimeout)
        .isEqualTo("2m");
  }
}
