package io.warmmetal.controller.cloudprovider;

import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import java.util.List;

/**
 * The one seam between the controller and the fleet, as upstream's {@code
 * pkg/cloudprovider/types.go}: instance types per node class, and NodeClaims' instances created,
 * deleted and listed. Answers are records; failures are typed ({@link CloudProviderException}).
 * Everything but {@link #instanceTypes} may block on the network: call it off any thread that
 * plans.
 */
public interface CloudProvider {

  /**
   * The node class's instance types as last read — no I/O: the implementation keeps them fresh in
   * the background, so a plan never waits on the fleet.
   *
   * @throws CloudProviderException.Unavailable not read yet, or the last read failed
   * @throws CloudProviderException.NodeClassNotReady its credentials cannot be read
   */
  Catalog instanceTypes(WarmMetalNodeClass nodeClass) throws CloudProviderException;

  /**
   * The instance types a NodePool's nodes may be of, as upstream's {@code
   * GetInstanceTypes(nodePool)}: its node class's, and how the NodePool's NodeOverlays change them
   * ({@link Catalog#overlay}). Without overlays, the node class's catalog.
   *
   * @throws CloudProviderException.UnevaluatedNodePool NodeOverlays are on and have not been
   *     evaluated for this NodePool yet
   */
  default Catalog instanceTypes(NodePool pool, WarmMetalNodeClass nodeClass)
      throws CloudProviderException {
    return instanceTypes(nodeClass);
  }

  /**
   * Whether the node class's instance types have been read at least once (or tried): until then a
   * plan would leave its NodePools out for no reason but a cold cache.
   */
  boolean instanceTypesKnown(WarmMetalNodeClass nodeClass);

  /**
   * Launches the claim's instance. The claim's UID is the client token: a retry — after a timeout,
   * an outage, a restart — gets the same instance, never a second one.
   */
  Launched create(NodeClaim claim) throws CloudProviderException;

  /**
   * Terminates the claim's instances: the one recorded on it and any launched for it but not
   * recorded (found by its UID).
   *
   * @throws CloudProviderException.NotFound it has none left
   */
  void delete(NodeClaim claim) throws CloudProviderException;

  /**
   * The live instances launched for NodeClaims through the node class's fleet account, each once.
   */
  List<Instance> list(WarmMetalNodeClass nodeClass) throws CloudProviderException;

  /**
   * Joins a standby node for one entry of what the node class keeps pre-joined (its own client
   * token: a launch whose answer was lost is found by the next count).
   */
  Instance createStandby(WarmMetalNodeClass nodeClass, WarmMetalNodeClass.PreJoined entry)
      throws CloudProviderException;

  /**
   * The node class's live standby instances (joining or joined), each once: the standby counts them
   * against what it keeps, and retires the surplus.
   */
  List<Instance> listStandby(WarmMetalNodeClass nodeClass) throws CloudProviderException;

  /**
   * Terminates one instance (its machine is reset and returns to its pool).
   *
   * @throws CloudProviderException.NotFound it is gone already
   */
  void terminate(WarmMetalNodeClass nodeClass, String instanceId) throws CloudProviderException;

  /** Asks the fleet now, with the node class's credentials: its readiness. */
  void check(WarmMetalNodeClass nodeClass) throws CloudProviderException;

  /**
   * The Node conditions that make a node unhealthy, and for how long each is tolerated before the
   * node is repaired (upstream's {@code RepairPolicies}; none: no repair). No I/O.
   */
  List<RepairPolicy> repairPolicies();
}
