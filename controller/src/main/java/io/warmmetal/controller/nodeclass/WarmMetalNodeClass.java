package io.warmmetal.controller.nodeclass;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Version;
import io.warmmetal.controller.karpenter.Hashes;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * WarmMetal's node class ({@code warmmetal.io/v1}), what a NodePool's {@code nodeClassRef} points
 * at: where the instances API is, the Secret holding its token, how nodes join, kubelet settings,
 * images to pre-pull, and the launch and registration timeouts (configurable: Karpenter hard-codes
 * 5 and 15 minutes). Cluster-scoped.
 */
@Group("warmmetal.io")
@Version("v1")
@Kind("WarmMetalNodeClass")
@Plural("warmmetalnodeclasses")
public class WarmMetalNodeClass
    extends CustomResource<WarmMetalNodeClass.Spec, WarmMetalNodeClass.Status> {
  public static final String GROUP = "warmmetal.io";
  public static final String KIND = "WarmMetalNodeClass";

  /** {@code spec}. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static class Spec {
    /** The instances API, e.g. {@code http://warmmetal-api.warmmetal-system:8080}. */
    public String endpoint;

    /** The Secret (and key) holding a client-role bearer token for the API. */
    public SecretKeyRef credentialsSecretRef;

    public Join join = new Join();
    public Kubelet kubelet;
    public List<String> prePullImages = new ArrayList<>();

    /**
     * The node image version its nodes run ({@code GET /v1/boot/images}, e.g. {@code
     * v1.20.2-10b0691559cf}), as an EC2NodeClass names its AMI: launches take only machines booted
     * from it, and nodes on another image drift ({@code ImageDrift}) and are replaced. Unset: any
     * image. Not part of the node class's hash — changing it drifts only the nodes not on it. Pair
     * it with the pool's image (the API's), which reboots warm machines onto it.
     */
    public String image;

    /** How long a launched instance may take to be running (a duration, e.g. {@code 2m}). */
    public String launchTimeout;

    /** How long a node may take to register and become ready (e.g. {@code 5m}). */
    public String registrationTimeout;

    /**
     * Whether a launch may take a machine from the standby tier (switched on and prepared: minutes)
     * when none is warm or preparing; default true. Set false for network-booted (stateless)
     * machines: one claimed while switched off cannot re-enroll when it boots.
     */
    public Boolean launchFromStandby;

    /**
     * Which machine labels are the zone and region of its nodes (default {@code
     * topology.kubernetes.io/zone} and {@code topology.kubernetes.io/region}): racks as zones,
     * rooms as regions, say. Nodes get them as the well-known zone and region labels; spread and
     * affinity over zones place nodes by them.
     */
    public String zoneLabel;

    public String regionLabel;

    public String zoneLabelOrDefault() {
      return zoneLabel == null || zoneLabel.isBlank() ? "topology.kubernetes.io/zone" : zoneLabel;
    }

    public String regionLabelOrDefault() {
      return regionLabel == null || regionLabel.isBlank()
          ? "topology.kubernetes.io/region"
          : regionLabel;
    }

    /** {@link #launchFromStandby}, its default applied. */
    public boolean launchesFromStandby() {
      return !Boolean.FALSE.equals(launchFromStandby);
    }
  }

  /** A key of a Secret. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static class SecretKeyRef {
    public String name;
    public String namespace;
    public String key;
  }

  /**
   * How nodes join: the control-plane endpoint and its CA hash; bootstrap tokens are minted per
   * NodeClaim.
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static class Join {
    public String apiServer;
    public String caCertHash;
  }

  /** Kubelet settings passed to the join. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static class Kubelet {
    public Integer maxPods;
    public Map<String, String> systemReserved;
    public Map<String, String> kubeReserved;
  }

  /** {@code status}. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static class Status {
    public List<Condition> conditions = new ArrayList<>();
  }

  /**
   * What its nodes were made with, hashed (drift): how they join, their kubelet, their images — not
   * where the API is, its credentials or the timeouts, which change no node.
   */
  public String hash() {
    Map<String, Object> shaping = new TreeMap<>();
    shaping.put("join", getSpec().join);
    shaping.put("kubelet", getSpec().kubelet);
    shaping.put("prePullImages", getSpec().prePullImages);
    return Hashes.of(shaping);
  }

  @Override
  protected Spec initSpec() {
    return new Spec();
  }
}
