package io.warmmetal.controller.nodeclass;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Version;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * WarmMetal's node class ({@code warmmetal.io/v1}), what a NodePool's {@code nodeClassRef} points at: where the
 * instances API is, the Secret holding its token, how nodes join, kubelet settings, images to pre-pull, and the
 * launch and registration timeouts (configurable: Karpenter hard-codes 5 and 15 minutes). Cluster-scoped.
 */
@Group("warmmetal.io")
@Version("v1")
@Kind("WarmMetalNodeClass")
@Plural("warmmetalnodeclasses")
public class WarmMetalNodeClass extends CustomResource<WarmMetalNodeClass.Spec, WarmMetalNodeClass.Status> {
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
    /** How long a launched instance may take to be running (a duration, e.g. {@code 2m}). */
    public String launchTimeout;
    /** How long a node may take to register and become ready (e.g. {@code 5m}). */
    public String registrationTimeout;
    /**
     * Whether a launch may take a machine from the standby tier (switched on and prepared: minutes) when none is
     * warm or preparing; default true. Set false for network-booted (stateless) machines: one claimed while
     * switched off cannot re-enroll when it boots.
     */
    public Boolean launchFromStandby;

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

  /** How nodes join: the control-plane endpoint and its CA hash; bootstrap tokens are minted per NodeClaim. */
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

  @Override
  protected Spec initSpec() {
    return new Spec();
  }
}
