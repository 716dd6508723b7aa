package io.warmmetal.controller.state;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.storage.CSINode;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.util.HashMap;
import java.util.Map;

/** Claims, volumes, classes and CSINodes a test puts in maps, looked up as the informers would. */
final class VolumeObjects implements VolumeUsage.Lookup {
  final Map<String, PersistentVolumeClaim> claims = new HashMap<>();
  final Map<String, PersistentVolume> volumes = new HashMap<>();
  final Map<String, StorageClass> classes = new HashMap<>();
  final Map<String, CSINode> csiNodes = new HashMap<>();

  /** A claim in {@code default}, bound to {@code volume} or waiting on {@code storageClass}. */
  void claim(String name, String volume, String storageClass) {
    claims.put(
        "default/" + name,
        new PersistentVolumeClaimBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace("default")
            .endMetadata()
            .withNewSpec()
            .withVolumeName(volume)
            .withStorageClassName(storageClass)
            .endSpec()
            .build());
  }

  @Override
  public PersistentVolumeClaim claim(String namespace, String name) {
    return claims.get(namespace + "/" + name);
  }

  @Override
  public PersistentVolume volume(String name) {
    return volumes.get(name);
  }

  @Override
  public StorageClass storageClass(String name) {
    return classes.get(name);
  }

  @Override
  public CSINode csiNode(String name) {
    return csiNodes.get(name);
  }
}
