package io.warmmetal.protocol.commands;

import io.vertx.core.json.JsonObject;
import io.warmmetal.protocol.Fields;
import io.warmmetal.protocol.MalformedFrame;
import java.util.Map;

/**
 * What a joining host needs, and all that the shipped {@code join.sh} reads: the Node's providerID,
 * the instance's shape (its instance-type label), the machine's labels (the zone and region the
 * Node is labelled with) and either the kubeadm join with its bootstrap token or the user data
 * (base64) run instead. Both secrets travel only over the channel's mutual TLS.
 */
public record JoinParams(
    String providerId,
    String shape,
    Map<String, String> machineLabels,
    KubernetesJoin kubernetes,
    String userData)
    implements CommandParams {

  public JoinParams {
    if (providerId == null || shape == null) {
      throw new MalformedFrame("a join has a providerId and a shape");
    }
    machineLabels = Map.copyOf(machineLabels == null ? Map.of() : machineLabels);
  }

  public static JoinParams fromJson(JsonObject json) {
    JsonObject kubernetes =
        json.getValue("kubernetes") == null ? null : Fields.object(json, "kubernetes");
    return new JoinParams(
        Fields.string(json, "providerId"),
        Fields.string(json, "shape"),
        Fields.strings(json, "machineLabels"),
        kubernetes == null ? null : KubernetesJoin.fromJson(kubernetes),
        Fields.optionalString(json, "userData"));
  }

  @Override
  public JsonObject toJson() {
    JsonObject json =
        new JsonObject()
            .put("providerId", providerId)
            .put("shape", shape)
            .put("machineLabels", Fields.toObject(machineLabels));
    if (kubernetes != null) {
      json.put("kubernetes", kubernetes.toJson());
    }
    if (userData != null) {
      json.put("userData", userData);
    }
    return json;
  }

  @Override
  public String toString() {
    return "JoinParams["
        + providerId
        + ", "
        + shape
        + (userData != null ? ", user data" : "")
        + "]"; // no secrets
  }
}
