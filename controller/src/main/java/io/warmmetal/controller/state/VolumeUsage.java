package io.warmmetal.controller.state;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.storage.CSINode;
import io.fabric8.kubernetes.api.model.storage.CSINodeDriver;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.warmmetal.controller.scheduling.PodRequest;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * CSI attach limits, as upstream's VolumeUsage: the claims a pod mounts, per CSI driver (a bound
 * claim's volume's driver, else its StorageClass's provisioner, in-tree names translated to their
 * CSI drivers), and how many volumes each driver can attach on a registered node (its CSINode's
 * {@code allocatable.count}). A node not registered yet has no CSINode: no limit, as upstream.
 */
public final class VolumeUsage {
  /** The objects a pod's volumes and a node's limits are looked up in (null: not there). */
  public interface Lookup extends VolumeTopology.Lookup {
    CSINode csiNode(String name);
  }

  /** No volumes counted, no limits: where nothing looks volumes up (tests of other things). */
  public static final VolumeUsage NONE = new VolumeUsage(null);

  /**
   * In-tree provisioners and the CSI drivers that serve their volumes now (csi-translation-lib's
   * names).
   */
  private static final Map<String, String> IN_TREE =
      Map.of(
          "kubernetes.io/aws-ebs", "ebs.csi.aws.com",
          "kubernetes.io/gce-pd", "pd.csi.storage.gke.io",
          "kubernetes.io/azure-disk", "disk.csi.azure.com",
          "kubernetes.io/azure-file", "file.csi.azure.com",
          "kubernetes.io/cinder", "cinder.csi.openstack.org",
          "kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com",
          "kubernetes.io/portworx-volume", "pxd.portworx.com");

  private final Lookup lookup;

  public VolumeUsage(Lookup lookup) {
    this.lookup = lookup;
  }

  /** The pod as plans see it: its request with the claims it mounts per driver. */
  public PodRequest request(Pod pod) {
    PodRequest request = PodRequests.of(pod);
    Map<String, Set<String>> volumes = volumes(pod);
    return volumes.isEmpty() ? request : request.withVolumes(volumes);
  }

  /**
   * The claims ({@code namespace/name}) the pod mounts, per CSI driver; a claim, volume or class
   * not there yet, or a volume of no CSI driver (NFS, say), is not counted — as upstream.
   */
  Map<String, Set<String>> volumes(Pod pod) {
    if (lookup == null || pod.getSpec() == null || pod.getSpec().getVolumes() == null) {
      return Map.of();
    }
    Map<String, Set<String>> byDriver = new HashMap<>();
    String namespace = pod.getMetadata().getNamespace();
    for (Volume volume : pod.getSpec().getVolumes()) {
      String claimName = VolumeTopology.claimName(pod, volume);
      if (claimName == null) {
        continue;
      }
      PersistentVolumeClaim claim = lookup.claim(namespace, claimName);
      String driver = claim == null ? null : driver(claim);
      if (driver != null) {
        byDriver.computeIfAbsent(driver, d -> new HashSet<>()).add(namespace + "/" + claimName);
      }
    }
    return byDriver;
  }

  private String driver(PersistentVolumeClaim claim) {
    var spec = claim.getSpec();
    if (spec == null) {
      return null;
    }
    if (spec.getVolumeName() != null && !spec.getVolumeName().isEmpty()) {
      PersistentVolume volume = lookup.volume(spec.getVolumeName());
      if (volume == null || volume.getSpec() == null) {
        return null;
      }
      if (volume.getSpec().getCsi() != null) {
        return volume.getSpec().getCsi().getDriver();
      }
      return volume.getSpec().getAwsElasticBlockStore() != null
          ? IN_TREE.get("kubernetes.io/aws-ebs")
          : null;
    }
    if (spec.getStorageClassName() == null || spec.getStorageClassName().isEmpty()) {
      return null;
    }
    StorageClass storageClass = lookup.storageClass(spec.getStorageClassName());
    if (storageClass == null || storageClass.getProvisioner() == null) {
      return null;
    }
    return IN_TREE.getOrDefault(storageClass.getProvisioner(), storageClass.getProvisioner());
  }

  /**
   * How many volumes each CSI driver can attach on the node: its CSINode's counts (a driver that
   * gives none is unbounded, as Kubernetes reads it).
   */
  public Map<String, Integer> limits(String nodeName) {
    CSINode node = lookup == null || nodeName == null ? null : lookup.csiNode(nodeName);
    if (node == null || node.getSpec() == null || node.getSpec().getDrivers() == null) {
      return Map.of();
    }
    Map<String, Integer> limits = new HashMap<>();
    for (CSINodeDriver driver : node.getSpec().getDrivers()) {
      if (driver.getAllocatable() != null && driver.getAllocatable().getCount() != null) {
        limits.put(driver.getName(), driver.getAllocatable().getCount());
      }
    }
    return limits;
  }
}
