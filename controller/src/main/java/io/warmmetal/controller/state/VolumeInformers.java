package io.warmmetal.controller.state;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;

/**
 * The cluster's PersistentVolumeClaims, PersistentVolumes and StorageClasses, as informers have
 * them: what {@link VolumeTopology} looks a pod's volumes up in. A change to any brings a pass (a
 * claim bound to a volume changes where its pods may go).
 */
public final class VolumeInformers implements VolumeTopology.Lookup, AutoCloseable {
  private final SharedIndexInformer<PersistentVolumeClaim> claims;
  private final SharedIndexInformer<PersistentVolume> volumes;
  private final SharedIndexInformer<StorageClass> classes;

  private VolumeInformers(
      SharedIndexInformer<PersistentVolumeClaim> claims,
      SharedIndexInformer<PersistentVolume> volumes,
      SharedIndexInformer<StorageClass> classes) {
    this.claims = claims;
    this.volumes = volumes;
    this.classes = classes;
  }

  @SuppressWarnings("unchecked")
  public static VolumeInformers inform(KubernetesClient kube, ResourceEventHandler<?> handler) {
    return new VolumeInformers(
        kube.persistentVolumeClaims()
            .inAnyNamespace()
            .inform((ResourceEventHandler<PersistentVolumeClaim>) handler),
        kube.persistentVolumes().inform((ResourceEventHandler<PersistentVolume>) handler),
        kube.storage().v1().storageClasses().inform((ResourceEventHandler<StorageClass>) handler));
  }

  @Override
  public PersistentVolumeClaim claim(String namespace, String name) {
    return claims.getStore().getByKey(namespace + "/" + name);
  }

  @Override
  public PersistentVolume volume(String name) {
    return volumes.getStore().getByKey(name);
  }

  @Override
  public StorageClass storageClass(String name) {
    return classes.getStore().getByKey(name);
  }

  @Override
  public void close() {
    claims.close();
    volumes.close();
    classes.close();
  }
}
