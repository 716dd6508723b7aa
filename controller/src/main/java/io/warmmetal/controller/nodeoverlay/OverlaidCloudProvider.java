package io.warmmetal.controller.nodeoverlay;

import io.warmmetal.controller.cloudprovider.Catalog;
import io.warmmetal.controller.cloudprovider.CloudProvider;
import io.warmmetal.controller.cloudprovider.CloudProviderException;
import io.warmmetal.controller.cloudprovider.Instance;
import io.warmmetal.controller.cloudprovider.Launched;
import io.warmmetal.controller.cloudprovider.RepairPolicy;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import java.util.List;

/**
 * The cloud provider with NodeOverlays applied, as upstream's {@code overlay.Decorate}: a
 * NodePool's instance types come with how its overlays change them (once evaluated for it);
 * everything else goes through unchanged. Without the {@code NodeOverlay} feature gate it is not
 * put in place.
 */
public final class OverlaidCloudProvider implements CloudProvider {
  private final CloudProvider cloud;
  private final InstanceTypeStore store;

  public OverlaidCloudProvider(CloudProvider cloud, InstanceTypeStore store) {
    this.cloud = cloud;
    this.store = store;
  }

  @Override
  public Catalog instanceTypes(NodePool pool, WarmMetalNodeClass nodeClass)
      throws CloudProviderException {
    Catalog catalog = cloud.instanceTypes(pool, nodeClass);
    return catalog.overlaid(store.overlay(pool.getMetadata().getName()));
  }

  @Override
  public Catalog instanceTypes(WarmMetalNodeClass nodeClass) throws CloudProviderException {
    return cloud.instanceTypes(nodeClass);
  }

  @Override
  public boolean instanceTypesKnown(WarmMetalNodeClass nodeClass) {
    return cloud.instanceTypesKnown(nodeClass);
  }

  @Override
  public Launched create(NodeClaim claim) throws CloudProviderException {
    return cloud.create(claim);
  }

  @Override
  public void delete(NodeClaim claim) throws CloudProviderException {
    cloud.delete(claim);
  }

  @Override
  public List<Instance> list(WarmMetalNodeClass nodeClass) throws CloudProviderException {
    return cloud.list(nodeClass);
  }

  @Override
  public Instance createStandby(WarmMetalNodeClass nodeClass, WarmMetalNodeClass.PreJoined entry)
      throws CloudProviderException {
    return cloud.createStandby(nodeClass, entry);
  }

  @Override
  public List<Instance> listStandby(WarmMetalNodeClass nodeClass) throws CloudProviderException {
    return cloud.listStandby(nodeClass);
  }

  @Override
  public void terminate(WarmMetalNodeClass nodeClass, String instanceId)
      throws CloudProviderException {
    cloud.terminate(nodeClass, instanceId);
  }

  @Override
  public void check(WarmMetalNodeClass nodeClass) throws CloudProviderException {
    cloud.check(nodeClass);
  }

  @Override
  public List<RepairPolicy> repairPolicies() {
    return cloud.repairPolicies();
  }
}
