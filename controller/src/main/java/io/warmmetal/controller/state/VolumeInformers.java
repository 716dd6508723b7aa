package io.warmmetal.controller.state;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.storage.CSINode;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;

/**
 * The cluster's PersistentVolumeClaims, PersistentVolumes, StorageClasses and CSINodes, as
 * informers have them: what {@link VolumeTopology} and {@link VolumeUsage} look a pod's volumes and
 * a node's attach limits up in. Started when a pod's volume is first looked up (a cluster whose
 * pods claim no volumes is not watched for them), the first lookup waiting for their lists; a
 * change to any then brings a pass (a claim bound to a volume changes where its pods may go).
 */
public final class VolumeInformers implements VolumeUsage.Lookup, AutoCloseable {
  private final KubernetesClient kube;
  private final ResourceEventHandler<?> handler;
  private SharedIndexInformer<PersistentVolumeClaim> claims;
  private SharedIndexInformer<PersistentVolume> volumes;
  private SharedIndexInformer<StorageClass> classes;
  private SharedIndexInformer<CSINode> csiNodes;
  private boolean closed;

  public VolumeInformers(KubernetesClient kube, ResourceEventHandler<?> handler) {
    this.kube = kube;
    this.handler = handler;
  }

  @SuppressWarnings("unchecked")
  private synchronized void started() {
    if (claims != null || closed) {
      return;
    }
    claims =
        kube.persistentVolumeClaims()
            .inAnyNamespace()
            .inform((ResourceEventHandler<PersistentVolumeClaim>) handler);
    volumes = kube.persistentVolumes().inform((ResourceEventHandler<PersistentVolume>) handler);
    classes =
        kube.storage().v1().storageClasses().inform((ResourceEventHandler<StorageClass>) handler);
    csiNodes = kube.storage().v1().csiNodes().inform((ResourceEventHandler<CSINode>) handler);
  }

  @Override
  public PersistentVolumeClaim claim(String namespace, String name) {
    started();
    return claims == null ? null : claims.getStore().getByKey(namespace + "/" + name);
  }

  @Override
  public PersistentVolume volume(String name) {
    started();
    return volumes == null ? null : volumes.getStore().getByKey(name);
  }

  @Override
  public StorageClass storageClass(String name) {
    started();
    return classes == null ? null : classes.getStore().getByKey(name);
  }

  /** Null until a pod's volume has been looked up: only then do attach limits matter. */
  @Override
  public synchronized CSINode csiNode(String name) {
    return csiNodes == null ? null : csiNodes.getStore().getByKey(name);
  }

  @Override
  public synchronized void close() {
    closed = true;
    if (claims != null) {
      claims.close();
      volumes.close();
      classes.close();
      csiNodes.close();
    }
  }
}
