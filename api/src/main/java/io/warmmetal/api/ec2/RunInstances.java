package io.warmmetal.api.ec2;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.auth.Permission;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.lifecycle.Instance;
import io.warmmetal.api.lifecycle.Launch;
import io.warmmetal.api.lifecycle.LaunchSpec;
import io.warmmetal.api.lifecycle.Lifecycle;
import io.warmmetal.api.lifecycle.Refusal;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * RunInstances onto the launch function: {@code MinCount}…{@code MaxCount} machines of one shape
 * (its name or alias) all or nothing, {@code ClientToken} idempotent per project, tags as the
 * instances' labels, {@code Placement.AvailabilityZone} as the machines' zone.
 */
final class RunInstances {
  static final int MAX_USER_DATA_BYTES = 64 * 1024;
  private static final int MAX_CLIENT_TOKEN = 64;

  private RunInstances() {}

  static Action action(Lifecycle lifecycle, Pool db) {
    return new Action(
        "RunInstances",
        Permission.LAUNCH,
        List.of(
            "MinCount",
            "MaxCount",
            "InstanceType",
            "ImageId",
            "ClientToken",
            "UserData",
            "Placement.AvailabilityZone",
            "TagSpecification.N.ResourceType",
            "TagSpecification.N.Tag.N.Key",
            "TagSpecification.N.Tag.N.Value"),
        call -> {
          LaunchSpec spec = spec(call);
          return lifecycle
              .launch(spec)
              .recover(e -> Future.failedFuture(refusal(e, spec)))
              .compose(launch -> describe(db, launch))
              .map(instances -> answer(call, instances));
        });
  }

  private static LaunchSpec spec(Ec2Call call) {
    QueryRequest p = call.params();
    int min = count(p, "MinCount");
    int max = count(p, "MaxCount");
    if (max < min) {
      throw Ec2Error.invalidValue(
          "MaxCount", "(" + max + ") must not be below MinCount (" + min + ")");
    }
    String clientToken = p.string("ClientToken");
    if (clientToken != null
        && (clientToken.isEmpty()
            || clientToken.length() > MAX_CLIENT_TOKEN
            || !clientToken.chars().allMatch(c -> c >= 0x21 && c <= 0x7e))) {
      throw Ec2Error.invalidValue("ClientToken", "must be 1 to 64 printable ASCII characters");
    }
    JsonObject machineLabels = new JsonObject();
    String zone = p.string("Placement.AvailabilityZone");
    if (zone != null && !zone.isEmpty()) {
      machineLabels.put(Ec2Call.TOPOLOGY.zoneLabel(), zone);
    }
    return new LaunchSpec(
        call.creator(),
        List.of(p.required("InstanceType")),
        min,
        max,
        clientToken,
        Tags.asLabels(instanceTags(p)),
        null,
        userData(p.string("UserData")),
        // An EC2 instance may be pending a while: a machine still being prepared, or in standby,
        // counts as capacity (the instance is pending until it is ready).
        true,
        true,
        machineLabels,
        false,
        false);
  }

  /** MinCount and MaxCount: both required, as EC2 has them. */
  private static int count(QueryRequest p, String name) {
    Integer n = p.integer(name, 1, 10_000);
    if (n == null) {
      throw Ec2Error.missing(name);
    }
    return n;
  }

  /** The tags of the {@code instance} tag specifications; another resource type is refused. */
  private static Map<String, String> instanceTags(QueryRequest p) {
    Map<String, String> tags = new LinkedHashMap<>();
    for (int n : p.indices("TagSpecification")) {
      String prefix = "TagSpecification." + n;
      String type = p.required(prefix + ".ResourceType");
      if (!"instance".equals(type)) {
        throw Ec2Error.invalidValue(
            prefix + ".ResourceType", "'" + type + "' cannot be tagged here: only instance");
      }
      tags.putAll(p.tags(prefix + ".Tag"));
    }
    return tags;
  }

  private static byte[] userData(String encoded) {
    if (encoded == null) {
      return null;
    }
    byte[] decoded;
    try {
      decoded = Base64.getMimeDecoder().decode(encoded);
    } catch (IllegalArgumentException e) {
      throw Ec2Error.invalidValue("UserData", "is not valid base64");
    }
    if (decoded.length > MAX_USER_DATA_BYTES) {
      throw Ec2Error.invalidValue(
          "UserData",
          "is " + decoded.length + " bytes decoded; the limit is " + MAX_USER_DATA_BYTES);
    }
    return decoded;
  }

  /**
   * The launch function's refusal of an unknown shape is a bad InstanceType (any other is mapped as
   * every refusal is).
   */
  private static Throwable refusal(Throwable e, LaunchSpec spec) {
    String field = e instanceof Refusal r ? r.field() : e instanceof ApiError a ? a.field() : null;
    if ("shape".equals(field) || "shapes".equals(field)) {
      return Ec2Error.invalidValue(
          "InstanceType", "'" + spec.shapes().get(0) + "' is not a shape of this fleet");
    }
    return e;
  }

  /** The launched instances with what EC2 shows beside them, in launch order. */
  private static Future<List<Ec2Instance>> describe(Pool db, Launch launch) {
    List<String> ids = launch.instances().stream().map(Instance::id).toList();
    return db.preparedQuery(Ec2Instance.SELECT + " WHERE i.id = ANY($2) ORDER BY i.seq")
        .execute(
            Tuple.of(Ec2Call.TOPOLOGY.zoneLabel()).addArrayOfString(ids.toArray(String[]::new)))
        .map(
            rows -> {
              List<Ec2Instance> out = new ArrayList<>();
              rows.forEach(r -> out.add(Ec2Instance.from(r)));
              return out;
            });
  }

  private static Xml answer(Ec2Call call, List<Ec2Instance> instances) {
    Xml xml = call.response();
    String reservation = instances.isEmpty() ? null : instances.get(0).instance().launchId();
    xml.text("reservationId", reservation);
    xml.text("ownerId", call.scope().home());
    xml.open("groupSet").close();
    int[] index = {0};
    xml.set("instancesSet", instances, i -> i.write(xml, index[0]++));
    return xml;
  }
}
