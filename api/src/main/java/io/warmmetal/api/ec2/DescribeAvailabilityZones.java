package io.warmmetal.api.ec2;

import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.warmmetal.api.auth.Permission;
import io.warmmetal.api.shapes.ShapeQueries;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * DescribeAvailabilityZones: the zones the fleet's machines are labelled with ({@code
 * topology.kubernetes.io/zone}, their region from {@code topology.kubernetes.io/region}), among the
 * shapes the caller may launch. A zone's id is its name.
 */
final class DescribeAvailabilityZones {
  private DescribeAvailabilityZones() {}

  private record Zone(String name, String region) {}

  static Action action(Pool db) {
    return new Action(
        "DescribeAvailabilityZones",
        Permission.READ,
        List.of(
            "ZoneName.N", "ZoneId.N", "AllAvailabilityZones", "Filter.N.Name", "Filter.N.Value.N"),
        call -> {
          QueryRequest p = call.params();
          p.bool("AllAvailabilityZones"); // checked; every zone is opted in
          return ShapeQueries.visible(db, call.scope(), Ec2Call.TOPOLOGY)
              .map(
                  shapes -> {
                    Map<String, Zone> zones = new TreeMap<>();
                    shapes.forEach(
                        s ->
                            ((JsonObject) s)
                                .getJsonArray("offerings")
                                .forEach(
                                    o -> {
                                      JsonObject offering = (JsonObject) o;
                                      String zone = offering.getString("zone");
                                      if (zone != null) {
                                        zones.putIfAbsent(
                                            zone, new Zone(zone, offering.getString("region")));
                                      }
                                    }));
                    List<Zone> out = new ArrayList<>(zones.values());
                    List<String> asked = new ArrayList<>(p.list("ZoneName"));
                    asked.addAll(p.list("ZoneId"));
                    if (!asked.isEmpty()) {
                      for (String name : asked) {
                        if (!zones.containsKey(name)) {
                          throw Ec2Error.invalidValue(
                              "ZoneName", "'" + name + "': no machine of this fleet is in it");
                        }
                      }
                      out.removeIf(z -> !asked.contains(z.name()));
                    }
                    for (QueryRequest.Filter f : p.filters()) {
                      Function<Zone, String> field =
                          switch (f.name()) {
                            case "zone-name", "zone-id" -> Zone::name;
                            case "region-name" -> z -> z.region() == null ? "" : z.region();
                            case "state" -> z -> "available";
                            case "zone-type" -> z -> "availability-zone";
                            default -> throw Ec2Error.invalidFilter(f.name());
                          };
                      Wildcards.retain(out, f.values(), field);
                    }
                    Xml xml = call.response();
                    return xml.set(
                        "availabilityZoneInfo",
                        out,
                        z ->
                            xml.text("zoneName", z.name())
                                .text("zoneId", z.name())
                                .text("zoneState", "available")
                                .text("regionName", z.region())
                                .text("zoneType", "availability-zone")
                                .text("optInStatus", "opt-in-not-required")
                                .text("groupName", z.region())
                                .text("networkBorderGroup", z.region())
                                .open("messageSet")
                                .close());
                  });
        });
  }
}
