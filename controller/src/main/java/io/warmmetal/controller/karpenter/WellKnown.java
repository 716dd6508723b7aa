package io.warmmetal.controller.karpenter;

import java.util.List;
import java.util.Map;

/**
 * Karpenter's vocabulary in one place, as upstream's {@code pkg/apis/v1/labels.go} keeps it: the
 * well-known labels, taints, annotations and finalizer its NodePools, NodeClaims and Nodes carry,
 * and Kubernetes' own that it reads.
 */
public final class WellKnown {
  private WellKnown() {}

  // Labels
  public static final String NODEPOOL_LABEL = "karpenter.sh/nodepool";
  public static final String CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type";
  public static final String REGISTERED_LABEL = "karpenter.sh/registered";
  public static final String INITIALIZED_LABEL = "karpenter.sh/initialized";

  /** Not upstream's: the NodeClaim a Node came from, by name (upstream finds it by providerID). */
  public static final String NODECLAIM_LABEL = "karpenter.sh/nodeclaim";

  public static final String INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type";
  public static final String ARCH_LABEL = "kubernetes.io/arch";
  public static final String OS_LABEL = "kubernetes.io/os";
  public static final String HOSTNAME_LABEL = "kubernetes.io/hostname";

  /** On a NodeClaim whose NodePool's minValues were relaxed (--min-values-policy=BestEffort). */
  public static final String MIN_VALUES_RELAXED_ANNOTATION =
      "karpenter.sh/nodeclaim-min-values-relaxed";

  /**
   * On a NodeClaim being deleted: when its Node's pods are deleted whatever their budgets (RFC
   * 3339; node repair sets it to the moment it repairs, so the drain is forceful).
   */
  public static final String TERMINATION_TIMESTAMP_ANNOTATION =
      "karpenter.sh/nodeclaim-termination-timestamp";

  public static final String ZONE_LABEL = "topology.kubernetes.io/zone";

  /**
   * The machine label the API keeps equal to the node image a machine booted (its facts' image
   * version).
   */
  public static final String IMAGE_MACHINE_LABEL = "warmmetal.io/image";

  public static final String REGION_LABEL = "topology.kubernetes.io/region";

  /**
   * Aliases upstream translates to the well-known keys in pods' selectors and affinity (its
   * NormalizedLabels).
   */
  public static final Map<String, String> NORMALIZED =
      Map.of(
          "failure-domain.beta.kubernetes.io/zone", ZONE_LABEL,
          "failure-domain.beta.kubernetes.io/region", REGION_LABEL,
          "beta.kubernetes.io/arch", ARCH_LABEL,
          "beta.kubernetes.io/os", OS_LABEL,
          "beta.kubernetes.io/instance-type", INSTANCE_TYPE_LABEL);

  // Taints
  /** On a Node from launch until registration has synced it. */
  public static final String UNREGISTERED_TAINT = "karpenter.sh/unregistered";

  /** On a Node being disrupted: no new pods. */
  public static final String DISRUPTED_TAINT = "karpenter.sh/disrupted";

  /** Taints Kubernetes puts on a Node that is not yet, or no longer, fit for pods. */
  public static final List<String> EPHEMERAL_TAINTS =
      List.of(
          "node.kubernetes.io/not-ready",
          "node.kubernetes.io/unreachable",
          "node.kubernetes.io/network-unavailable",
          "node.cloudprovider.kubernetes.io/uninitialized");

  // Annotations
  /** On a pod or Node: voluntary disruption may not take it. */
  public static final String DO_NOT_DISRUPT_ANNOTATION = "karpenter.sh/do-not-disrupt";

  /** On a NodeClaim one of whose instance types a NodeOverlay priced ({@code "true"}). */
  public static final String PRICE_OVERLAY_APPLIED_ANNOTATION =
      "karpenter.sh/price-overlay-applied";

  /** On a NodeClaim one of whose instance types a NodeOverlay gave extended resources. */
  public static final String CAPACITY_OVERLAY_APPLIED_ANNOTATION =
      "karpenter.sh/capacity-overlay-applied";

  /** On a CapacityBuffer's virtual pod (never created in the cluster): {@code "true"}. */
  public static final String CAPACITY_BUFFER_FAKE_POD_ANNOTATION =
      "karpenter.sh/capacity-buffer-fake-pod";

  /** On a CapacityBuffer's virtual pod: its buffer's name. */
  public static final String CAPACITY_BUFFER_NAME_ANNOTATION = "karpenter.sh/capacity-buffer-name";

  /** On a CapacityBuffer's virtual pod: its buffer's namespace. */
  public static final String CAPACITY_BUFFER_NAMESPACE_ANNOTATION =
      "karpenter.sh/capacity-buffer-namespace";

  // WarmMetal's own, between NodeClaims and the instances API
  /** On a NodeClaim: the instance launched for it. */
  public static final String INSTANCE_ANNOTATION = "warmmetal.io/instance-id";

  /**
   * On the instance: the UID of the NodeClaim it was launched for, so termination finds it even
   * unrecorded.
   */
  public static final String NODECLAIM_UID_LABEL = "warmmetal.io/nodeclaim-uid";

  // Pre-joined standby nodes (a node class's spec.preJoined)
  /**
   * On a pre-joined standby Node (the node class's name) and, with effects NoSchedule and
   * NoExecute, its taint: no pod but what tolerates everything lands there until a NodeClaim takes
   * it, and registration lifts both.
   */
  public static final String STANDBY = "warmmetal.io/standby";

  /**
   * On a NodeClaim that took a pre-joined node ({@code "true"}): registration adds no startup
   * taints, which the node's DaemonSets lifted long ago.
   */
  public static final String PRE_JOINED_ANNOTATION = "warmmetal.io/pre-joined";

  /** On a standby instance: the node class it was launched for. */
  public static final String STANDBY_OF_LABEL = "warmmetal.io/standby-of";

  /** On a standby instance: the node class's {@code spec.preJoined} entry ({@code key()}). */
  public static final String STANDBY_ENTRY_LABEL = "warmmetal.io/standby-entry";

  /**
   * On a standby instance: the node class's hash when it was launched (a changed class replaces
   * it).
   */
  public static final String NODECLASS_HASH_LABEL = "warmmetal.io/nodeclass-hash";

  // Finalizers
  /** On a NodeClaim: its instance goes (drained, terminated) before it does. */
  public static final String TERMINATION_FINALIZER = "karpenter.sh/termination";
}
