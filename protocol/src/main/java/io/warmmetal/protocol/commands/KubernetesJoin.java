package io.warmmetal.protocol.commands;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.warmmetal.protocol.Fields;
import io.warmmetal.protocol.MalformedFrame;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * How a host joins a cluster with kubeadm, as a launch's {@code kubernetes} ({@code KubernetesJoin}
 * in openapi.yaml): the control-plane endpoint, its CA's hash, a bootstrap token, the Node's labels
 * and taints, the control plane's version if known (the join refuses a kubelet the version skew
 * policy does not allow), and the kubelet's settings if any ({@link KubeletSettings}). The token is
 * a secret: null where it is withheld (stored, or shown back to a client).
 */
public record KubernetesJoin(
    String apiServer,
    String caCertHash,
    String bootstrapToken,
    Map<String, String> nodeLabels,
    List<Taint> taints,
    String controlPlaneVersion,
    KubeletSettings kubelet) {

  /** A join that does not say the control plane's version. */
  public KubernetesJoin(
      String apiServer,
      String caCertHash,
      String bootstrapToken,
      Map<String, String> nodeLabels,
      List<Taint> taints) {
    this(apiServer, caCertHash, bootstrapToken, nodeLabels, taints, null);
  }

  /** A join that leaves the kubelet's settings to the cluster's configuration. */
  public KubernetesJoin(
      String apiServer,
      String caCertHash,
      String bootstrapToken,
      Map<String, String> nodeLabels,
      List<Taint> taints,
      String controlPlaneVersion) {
    this(apiServer, caCertHash, bootstrapToken, nodeLabels, taints, controlPlaneVersion, null);
  }

  public KubernetesJoin {
    if (apiServer == null || caCertHash == null) {
      throw new MalformedFrame("a join has an apiServer and a caCertHash");
    }
    nodeLabels = Map.copyOf(nodeLabels == null ? Map.of() : nodeLabels);
    taints = List.copyOf(taints == null ? List.of() : taints);
    if (kubelet != null && kubelet.isEmpty()) {
      kubelet = null; // nothing to say: the cluster's configuration stands
    }
  }

  public static KubernetesJoin fromJson(JsonObject json) {
    List<Taint> taints = new ArrayList<>();
    Object list = json.getValue("taints");
    if (list != null && !(list instanceof JsonArray)) {
      throw new MalformedFrame("taints must be an array");
    }
    for (Object taint : list == null ? new JsonArray() : (JsonArray) list) {
      if (!(taint instanceof JsonObject t)) {
        throw new MalformedFrame("a taint must be an object");
      }
      taints.add(Taint.fromJson(t));
    }
    return new KubernetesJoin(
        Fields.string(json, "apiServer"),
        Fields.string(json, "caCertHash"),
        Fields.optionalString(json, "bootstrapToken"),
        Fields.strings(json, "nodeLabels"),
        taints,
        Fields.optionalString(json, "controlPlaneVersion"),
        json.getValue("kubelet") == null
            ? null
            : KubeletSettings.fromJson(Fields.object(json, "kubelet")));
  }

  /**
   * The same join with this token (a stored join gets its token back when it is sent to the host).
   */
  public KubernetesJoin withBootstrapToken(String token) {
    return new KubernetesJoin(
        apiServer, caCertHash, token, nodeLabels, taints, controlPlaneVersion, kubelet);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject().put("apiServer", apiServer).put("caCertHash", caCertHash);
    if (bootstrapToken != null) {
      json.put("bootstrapToken", bootstrapToken);
    }
    JsonArray taintList = new JsonArray();
    taints.forEach(t -> taintList.add(t.toJson()));
    if (controlPlaneVersion != null) {
      json.put("controlPlaneVersion", controlPlaneVersion);
    }
    if (kubelet != null) {
      json.put("kubelet", kubelet.toJson());
    }
    return json.put("nodeLabels", Fields.toObject(nodeLabels)).put("taints", taintList);
  }

  @Override
  public String toString() {
    return "KubernetesJoin["
        + apiServer
        + ", "
        + nodeLabels.size()
        + " labels, "
        + taints.size()
        + " taints]"; // never the token
  }
}
