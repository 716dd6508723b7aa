package io.warmmetal.controller.metrics;

import io.warmmetal.controller.cloudprovider.Catalog;
import io.warmmetal.controller.cloudprovider.CloudProvider;
import io.warmmetal.controller.cloudprovider.CloudProviderException;
import io.warmmetal.controller.cloudprovider.Instance;
import io.warmmetal.controller.cloudprovider.Launched;
import io.warmmetal.controller.cloudprovider.RepairPolicy;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass.PreJoined;
import java.time.Duration;
import java.util.List;

/**
 * The cloud provider with each call timed and each failure counted, as upstream's decorator ({@code
 * pkg/cloudprovider/metrics}): {@code karpenter_cloudprovider_duration_seconds} and {@code
 * karpenter_cloudprovider_errors_total} by method, the error's kind its type. Calls that read
 * memory (the catalog) are timed too: what a plan waits on.
 */
public final class MeteredCloudProvider implements CloudProvider {
  private final CloudProvider cloud;
  private final KarpenterMetrics metrics;

  public MeteredCloudProvider(CloudProvider cloud, KarpenterMetrics metrics) {
    this.cloud = cloud;
    this.metrics = metrics;
  }

  /** The provider this one meters (closed with it). */
  public CloudProvider metered() {
    return cloud;
  }

  @FunctionalInterface
  private interface Call<T> {
    T run() throws CloudProviderException;
  }

  @FunctionalInterface
  private interface Action {
    void run() throws CloudProviderException;
  }

  private void timed(String method, Action action) throws CloudProviderException {
    timed(
        method,
        () -> {
          action.run();
          return null;
        });
  }

  private <T> T timed(String method, Call<T> call) throws CloudProviderException {
    long start = System.nanoTime();
    String error = null;
    try {
      return call.run();
    } catch (CloudProviderException e) {
      error = e.getClass().getSimpleName() + "Error";
      throw e;
    } catch (RuntimeException e) {
      error = e.getClass().getSimpleName();
      throw e;
    } finally {
      metrics.cloudProviderCall(method, Duration.ofNanos(System.nanoTime() - start), error);
    }
  }

  @Override
  public Catalog instanceTypes(WarmMetalNodeClass nodeClass) throws CloudProviderException {
    return timed("GetInstanceTypes", () -> cloud.instanceTypes(nodeClass));
  }

  @Override
  public Catalog instanceTypes(NodePool pool, WarmMetalNodeClass nodeClass)
      throws CloudProviderException {
    return timed("GetInstanceTypes", () -> cloud.instanceTypes(pool, nodeClass));
  }

  @Override
  public boolean instanceTypesKnown(WarmMetalNodeClass nodeClass) {
    return cloud.instanceTypesKnown(nodeClass);
  }

  @Override
  public Launched create(NodeClaim claim) throws CloudProviderException {
    return timed("Create", () -> cloud.create(claim));
  }

  @Override
  public void delete(NodeClaim claim) throws CloudProviderException {
    timed("Delete", () -> cloud.delete(claim));
  }

  @Override
  public List<Instance> list(WarmMetalNodeClass nodeClass) throws CloudProviderException {
    return timed("List", () -> cloud.list(nodeClass));
  }

  @Override
  public Instance createStandby(WarmMetalNodeClass nodeClass, PreJoined entry)
      throws CloudProviderException {
    return timed("CreateStandby", () -> cloud.createStandby(nodeClass, entry));
  }

  @Override
  public List<Instance> listStandby(WarmMetalNodeClass nodeClass) throws CloudProviderException {
    return timed("ListStandby", () -> cloud.listStandby(nodeClass));
  }

  @Override
  public void terminate(WarmMetalNodeClass nodeClass, String instanceId)
      throws CloudProviderException {
    timed("Terminate", () -> cloud.terminate(nodeClass, instanceId));
  }

  @Override
  public void check(WarmMetalNodeClass nodeClass) throws CloudProviderException {
    timed("Check", () -> cloud.check(nodeClass));
  }

  /** Not timed, as upstream's decorator passes it through: a constant, no call to the fleet. */
  @Override
  public List<RepairPolicy> repairPolicies() {
    return cloud.repairPolicies();
  }
}
