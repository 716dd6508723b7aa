package io.warmmetal.api.ec2;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.warmmetal.api.auth.Permission;
import io.warmmetal.api.shapes.ShapeQueries;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

/**
 * DescribeInstanceTypes: the fleet's shapes (those the caller's project may launch) as instance
 * types — vCPUs, memory, GPUs, local disk. A shape asked for by its alias is answered under it.
 */
final class DescribeInstanceTypes {
  private DescribeInstanceTypes() {}

  /** One type: the shape, under the name it was asked by. */
  private record Type(String name, JsonObject shape) {}

  static Action action(Pool db) {
    return new Action(
        "DescribeInstanceTypes",
        Permission.READ,
        List.of("InstanceType.N", "Filter.N.Name", "Filter.N.Value.N", "MaxResults", "NextToken"),
        call -> {
          QueryRequest p = call.params();
          int limit = call.maxResults(5, 100, 100);
          int offset = call.offset();
          return ShapeQueries.visible(db, call.scope(), Ec2Call.TOPOLOGY)
              .map(
                  shapes -> {
                    List<Type> types = filter(named(shapes, p.list("InstanceType")), p.filters());
                    List<Type> page =
                        types.subList(
                            Math.min(offset, types.size()), Math.min(offset + limit, types.size()));
                    Xml xml = call.response();
                    xml.set("instanceTypeSet", page, t -> write(xml, t));
                    return xml.text(
                        "nextToken",
                        offset + limit < types.size() ? String.valueOf(offset + limit) : null);
                  });
        });
  }

  /** The shapes asked for by name or alias (each must exist), or every shape under its name. */
  private static List<Type> named(JsonArray shapes, List<String> asked) {
    List<Type> out = new ArrayList<>();
    if (asked.isEmpty()) {
      shapes.forEach(s -> out.add(new Type(((JsonObject) s).getString("name"), (JsonObject) s)));
      return out;
    }
    Set<String> missing = new LinkedHashSet<>();
    for (String name : new LinkedHashSet<>(asked)) {
      JsonObject shape = null;
      for (Object s : shapes) {
        JsonObject o = (JsonObject) s;
        if (name.equals(o.getString("name")) || name.equals(o.getString("alias"))) {
          shape = o;
        }
      }
      if (shape == null) {
        missing.add(name);
      } else {
        out.add(new Type(name, shape));
      }
    }
    if (!missing.isEmpty()) {
      throw new Ec2Error(
          "InvalidInstanceType",
          400,
          "The following supplied instance types do not exist: ["
              + String.join(", ", missing)
              + "]");
    }
    return out;
  }

  private static List<Type> filter(List<Type> types, List<QueryRequest.Filter> filters) {
    List<Type> out = new ArrayList<>(types);
    for (QueryRequest.Filter f : filters) {
      Function<Type, String> field =
          switch (f.name()) {
            case "instance-type" -> Type::name;
            case "processor-info.supported-architecture" ->
                t -> Ec2Instance.architecture(t.shape().getString("arch"));
            case "vcpu-info.default-vcpus" -> t -> String.valueOf(t.shape().getInteger("cpus"));
            case "memory-info.size-in-mib" -> t -> String.valueOf(mebibytes(t.shape()));
            case "bare-metal" -> t -> "true";
            default -> throw Ec2Error.invalidFilter(f.name());
          };
      Wildcards.retain(out, f.values(), field);
    }
    return out;
  }

  private static long mebibytes(JsonObject shape) {
    return shape.getInteger("memoryGiB") * 1024L;
  }

  private static void write(Xml xml, Type t) {
    JsonObject s = t.shape();
    xml.text("instanceType", t.name());
    xml.text("currentGeneration", true);
    xml.text("bareMetal", true);
    xml.text("freeTierEligible", false);
    xml.values("supportedUsageClasses", List.of("on-demand"));
    xml.values("supportedRootDeviceTypes", List.of("instance-store"));
    xml.open("processorInfo");
    xml.values("supportedArchitectures", List.of(Ec2Instance.architecture(s.getString("arch"))));
    xml.close();
    xml.open("vCpuInfo").text("defaultVCpus", s.getInteger("cpus")).close();
    xml.open("memoryInfo").text("sizeInMiB", mebibytes(s)).close();
    Long disk = s.getLong("diskGiB");
    xml.text("instanceStorageSupported", disk != null && disk > 0);
    if (disk != null && disk > 0) {
      xml.open("instanceStorageInfo").text("totalSizeInGB", disk).close();
    }
    JsonArray gpus = s.getJsonArray("gpus");
    if (gpus != null && !gpus.isEmpty()) {
      xml.open("gpuInfo");
      xml.set(
          "gpus",
          gpus,
          g ->
              xml.text("name", ((JsonObject) g).getString("model"))
                  .text("count", ((JsonObject) g).getInteger("count", 1)));
      xml.close();
    }
  }
}
