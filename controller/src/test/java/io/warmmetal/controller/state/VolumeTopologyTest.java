package io.warmmetal.controller.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirementBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.TopologySelectorTermBuilder;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Upstream's volume topology cases: a bound claim's volume node affinity (its first term; a local
 * volume's hostname left out), an unbound claim's StorageClass allowed topologies, the pod's own
 * affinity kept (ANDed in each of its terms), a missing claim keeping a pending pod out of plans.
 */
class VolumeTopologyTest {
  private static final String ZONE = "topology.kubernetes.io/zone";

  private final VolumeObjects objects = new VolumeObjects();
  private final Map<String, PersistentVolume> volumes = objects.volumes;
  private final Map<String, StorageClass> classes = objects.classes;
  private final VolumeTopology topology = new VolumeTopology(objects);

  private static NodeSelectorRequirement in(String key, String... values) {
    return new NodeSelectorRequirementBuilder()
        .withKey(key)
        .withOperator("In")
        .withValues(values)
        .build();
  }

  private static PodBuilder pending(String claim) {
    return new PodBuilder()
        .withNewMetadata()
        .withName("db-0")
        .withNamespace("default")
        .endMetadata()
        .withNewSpec()
        .addNewContainer()
        .withName("db")
        .endContainer()
        .addNewVolume()
        .withName("data")
        .withNewPersistentVolumeClaim()
        .withClaimName(claim)
        .endPersistentVolumeClaim()
        .endVolume()
        .endSpec()
        .withNewStatus()
        .addNewCondition()
        .withType("PodScheduled")
        .withStatus("False")
        .withReason("Unschedulable")
        .endCondition()
        .endStatus();
  }

  private void claim(String name, String volume, String storageClass) {
    objects.claim(name, volume, storageClass);
  }

  private void volume(String name, boolean local, NodeSelectorRequirement... first) {
    PersistentVolumeBuilder pv =
        new PersistentVolumeBuilder()
            .withNewMetadata()
            .withName(name)
            .endMetadata()
            .withNewSpec()
            .withNewNodeAffinity()
            .withNewRequired()
            .addNewNodeSelectorTerm()
            .withMatchExpressions(first)
            .endNodeSelectorTerm()
            .addNewNodeSelectorTerm()
            .withMatchExpressions(in(ZONE, "rack-9"))
            .endNodeSelectorTerm()
            .endRequired()
            .endNodeAffinity()
            .endSpec();
    if (local) {
      pv.editSpec().withNewLocal().withPath("/mnt/disks/a").endLocal().endSpec();
    }
    volumes.put(name, pv.build());
  }

  private static List<NodeSelectorRequirement> required(Pod pod) {
    return pod.getSpec()
        .getAffinity()
        .getNodeAffinity()
        .getRequiredDuringSchedulingIgnoredDuringExecution()
        .getNodeSelectorTerms()
        .get(0)
        .getMatchExpressions();
  }

  @Test
  void aBoundClaimPinsItsPodWhereItsVolumeIs() {
    claim("data", "pv-1", null);
    volume("pv-1", false, in(ZONE, "rack-2"));
    Pod pod = pending("data").build();
    List<Pod> planned = topology.inject(List.of(pod));
    assertThat(required(planned.get(0)))
        .as("the first of the volume's terms")
        .containsExactly(in(ZONE, "rack-2"));
    assertThat(pod.getSpec().getAffinity()).as("the informer's pod is left alone").isNull();
  }

  @Test
  void aLocalVolumesHostIsNoPlaceForANewNode() {
    claim("data", "pv-local", null);
    volume("pv-local", true, in("kubernetes.io/hostname", "wm-7"), in(ZONE, "rack-1"));
    assertThat(required(topology.inject(List.of(pending("data").build())).get(0)))
        .containsExactly(in(ZONE, "rack-1"));
  }

  @Test
  void anUnboundClaimGoesWhereItsStorageClassAllows() {
    claim("scratch", null, "rack-local");
    classes.put(
        "rack-local",
        new StorageClassBuilder()
            .withNewMetadata()
            .withName("rack-local")
            .endMetadata()
            .withProvisioner("kubernetes.io/no-provisioner")
            .withVolumeBindingMode("WaitForFirstConsumer")
            .withAllowedTopologies(
                new TopologySelectorTermBuilder()
                    .addNewMatchLabelExpression()
                    .withKey(ZONE)
                    .withValues("rack-3", "rack-4")
                    .endMatchLabelExpression()
                    .build())
            .build());
    Pod ownAffinity =
        pending("scratch")
            .editSpec()
            .withNewAffinity()
            .withNewNodeAffinity()
            .withNewRequiredDuringSchedulingIgnoredDuringExecution()
            .addNewNodeSelectorTerm()
            .withMatchExpressions(in("team", "ml"))
            .endNodeSelectorTerm()
            .addNewNodeSelectorTerm()
            .withMatchExpressions(in("team", "ops"))
            .endNodeSelectorTerm()
            .endRequiredDuringSchedulingIgnoredDuringExecution()
            .endNodeAffinity()
            .endAffinity()
            .endSpec()
            .build();
    Pod planned = topology.inject(List.of(ownAffinity)).get(0);
    var terms =
        planned
            .getSpec()
            .getAffinity()
            .getNodeAffinity()
            .getRequiredDuringSchedulingIgnoredDuringExecution()
            .getNodeSelectorTerms();
    assertThat(terms.get(0).getMatchExpressions())
        .containsExactly(in("team", "ml"), in(ZONE, "rack-3", "rack-4"));
    assertThat(terms.get(1).getMatchExpressions())
        .containsExactly(in("team", "ops"), in(ZONE, "rack-3", "rack-4"));
  }

  @Test
  void aPendingPodWhoseClaimIsNotThereYetIsNotPlannedButABoundOneStays() {
    Pod waiting = pending("not-yet").build();
    Pod bound = pending("not-yet").editSpec().withNodeName("wm-1").endSpec().build();
    Pod plain = new PodBuilder().withNewMetadata().withName("web").endMetadata().build();
    assertThat(topology.inject(List.of(waiting, bound, plain))).containsExactly(bound, plain);
  }

  @Test
  void aVolumeWithNoAffinityAndAClassWithNoTopologiesPinNothing() {
    claim("data", "pv-anywhere", null);
    volumes.put(
        "pv-anywhere",
        new PersistentVolumeBuilder()
            .withNewMetadata()
            .withName("pv-anywhere")
            .endMetadata()
            .build());
    Pod pod = pending("data").build();
    assertThat(topology.inject(List.of(pod)).get(0)).isSameAs(pod);
  }
}
