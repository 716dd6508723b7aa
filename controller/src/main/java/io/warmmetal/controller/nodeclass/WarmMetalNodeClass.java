package io.warmmetal.controller.nodeclass;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
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

    /**
     * Nodes kept joined ahead of time: for each entry, {@code count} machines of the instance type
     * (in the zone, if one is named) joined to the cluster as Nodes that belong to no NodePool and
     * carry the {@code warmmetal.io/standby} taint (NoSchedule and NoExecute), until a NodeClaim of
     * a NodePool using this class takes one without a join; a replacement is joined behind it.
     */
    public List<PreJoined> preJoined = new ArrayList<>();
  }

  /** One kind of pre-joined standby node and how many to keep. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static class PreJoined {
    /** An instance type (a shape's name or alias in the instances API). */
    @Required
    @Pattern("^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")
    public String instanceType;

    /** How many to keep joined. */
    @Required
    @Min(0)
    @Max(1000)
    public Integer count;

    /** Only machines in this zone (its value of the class's zone label); absent: any zone. */
    @Pattern("^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$")
    public String zone;

    public PreJoined() {}

    public PreJoined(String instanceType, int count, String zone) {
      this.instanceType = instanceType;
      this.count = count;
      this.zone = zone;
    }

    /**
     * Which entry a standby node was joined for, as a label value: its type and zone (hashed where
     * the two are too long for a label value).
     */
    public String key() {
      String key = zone == null ? instanceType : instanceType + "." + zone;
      return key.length() <= 63
          ? key
          : key.substring(0, 50) + "-" + Hashes.of(key).substring(0, 12);
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

    /** Each {@code spec.preJoined} entry's nodes as last counted. */
    public List<PreJoinedStatus> preJoined;
  }

  /** A {@code spec.preJoined} entry's nodes: joined and waiting, and still joining. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static class PreJoinedStatus {
    public String instanceType;
    public String zone;
    public int desired;

    /** Joined, Ready and waiting to be taken. */
    public int ready;

    /** Launched and not Ready yet. */
    public int joining;

    /** Why fewer are kept than desired, if they are (e.g. no machine to be had). */
    public String message;

    public PreJoinedStatus() {}

    public PreJoinedStatus(PreJoined entry, int ready, int joining, String message) {
      this.instanceType = entry.instanceType;
      this.zone = entry.zone;
      this.desired = entry.count == null ? 0 : entry.count;
      this.ready = ready;
      this.joining = joining;
      this.message = message;
    }
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
