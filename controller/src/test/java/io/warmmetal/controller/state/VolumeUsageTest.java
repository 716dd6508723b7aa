package io.warmmetal.controller.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.storage.CSINode;
import io.fabric8.kubernetes.api.model.storage.CSINodeBuilder;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Upstream's VolumeUsage: the claims a pod attaches per CSI driver (a bound volume's driver, an
 * unbound claim's class's provisioner, in-tree names translated; volumes of no CSI driver not
 * counted) and a node's limits from its CSINode.
 */
class VolumeUsageTest {
  private final VolumeObjects objects = new VolumeObjects();
  private final Map<String, PersistentVolume> volumes = objects.volumes;
  private final Map<String, StorageClass> classes = objects.classes;
  private final Map<String, CSINode> csiNodes = objects.csiNodes;
  private final VolumeUsage usage = new VolumeUsage(objects);

  private static Pod mounting(String... claimNames) {
    PodBuilder pod =
        new PodBuilder()
            .withNewMetadata()
            .withName("app-0")
            .withNamespace("default")
            .endMetadata()
            .withNewSpec()
            .addNewContainer()
            .withName("app")
            .endContainer()
            .endSpec();
    for (String claim : claimNames) {
      pod.editSpec()
          .addNewVolume()
          .withName("v-" + claim)
          .withNewPersistentVolumeClaim()
          .withClaimName(claim)
          .endPersistentVolumeClaim()
          .endVolume()
          .endSpec();
    }
    return pod.build();
  }

  private void claim(String name, String volume, String storageClass) {
    objects.claim(name, volume, storageClass);
  }

  private void storageClass(String name, String provisioner) {
    classes.put(
        name,
        new StorageClassBuilder()
            .withNewMetadata()
            .withName(name)
            .endMetadata()
            .withProvisioner(provisioner)
            .build());
  }

  @Test
  void aBoundClaimCountsForItsVolumesDriverAnUnboundOneForItsClassesProvisioner() {
    volumes.put(
        "pv-1",
        new PersistentVolumeBuilder()
            .withNewMetadata()
            .withName("pv-1")
            .endMetadata()
            .withNewSpec()
            .withNewCsi()
            .withDriver("rbd.csi.ceph.com")
            .withVolumeHandle("0001")
            .endCsi()
            .endSpec()
            .build());
    claim("bound", "pv-1", "fast");
    storageClass("fast", "rbd.csi.ceph.com");
    claim("unbound", null, "fast");
    storageClass("legacy", "kubernetes.io/aws-ebs");
    claim("in-tree", null, "legacy");

    assertThat(usage.volumes(mounting("bound", "unbound", "in-tree")))
        .isEqualTo(
            Map.of(
                "rbd.csi.ceph.com", Set.of("default/bound", "default/unbound"),
                "ebs.csi.aws.com", Set.of("default/in-tree")));
    assertThat(usage.request(mounting("bound")).volumes())
        .isEqualTo(Map.of("rbd.csi.ceph.com", Set.of("default/bound")));
  }

  @Test
  void volumesOfNoCsiDriverAndClaimsNotThereAreNotCounted() {
    volumes.put(
        "nfs",
        new PersistentVolumeBuilder()
            .withNewMetadata()
            .withName("nfs")
            .endMetadata()
            .withNewSpec()
            .withNewNfs()
            .withServer("10.0.0.1")
            .withPath("/export")
            .endNfs()
            .endSpec()
            .build());
    claim("shared", "nfs", null);
    claim("no-class", null, null);
    assertThat(usage.volumes(mounting("shared", "no-class", "missing"))).isEmpty();
  }

  @Test
  void aNodesLimitsAreItsCsiNodesCountsAndADriverWithoutOneIsUnbounded() {
    csiNodes.put(
        "node-1",
        new CSINodeBuilder()
            .withNewMetadata()
            .withName("node-1")
            .endMetadata()
            .withNewSpec()
            .addNewDriver()
            .withName("rbd.csi.ceph.com")
            .withNodeID("node-1")
            .withNewAllocatable()
            .withCount(24)
            .endAllocatable()
            .endDriver()
            .addNewDriver()
            .withName("nfs.csi.k8s.io")
            .withNodeID("node-1")
            .endDriver()
            .endSpec()
            .build());
    assertThat(usage.limits("node-1")).isEqualTo(Map.of("rbd.csi.ceph.com", 24));
    assertThat(usage.limits("node-2")).as("no CSINode yet: no limit").isEmpty();
  }
}
