package io.warmmetal.api.ec2;

import io.vertx.sqlclient.Pool;
import io.warmmetal.api.auth.Permission;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * DescribeInstances: the caller's instances by id or filter, grouped by reservation (a launch), a
 * page at a time ({@code MaxResults} 5–1000, {@code NextToken}); without {@code MaxResults}, up to
 * 1000 and a token for the rest.
 */
final class DescribeInstances {
  static final int PAGE = 1000;

  private DescribeInstances() {}

  static Action action(Pool db) {
    return new Action(
        "DescribeInstances",
        Permission.READ,
        List.of("InstanceId.N", "Filter.N.Name", "Filter.N.Value.N", "MaxResults", "NextToken"),
        call -> {
          QueryRequest p = call.params();
          List<String> ids = p.list("InstanceId");
          if (!ids.isEmpty() && p.string("MaxResults") != null) {
            throw new Ec2Error(
                "InvalidParameterCombination",
                400,
                "The parameter instancesSet cannot be used with the parameter maxResults");
          }
          int limit = call.maxResults(5, 1000, PAGE);
          return new InstanceSearch(call.caller().project(), Ec2Call.TOPOLOGY.zoneLabel(), ids)
              .filter(p.filters())
              .page(db, p.string("NextToken"), limit)
              .map(
                  page -> {
                    Xml xml = call.response();
                    xml.set(
                        "reservationSet",
                        byReservation(page.items()).values(),
                        reservation -> {
                          Ec2Instance first = reservation.get(0);
                          xml.text("reservationId", first.instance().launchId());
                          xml.text("ownerId", first.instance().project());
                          xml.open("groupSet").close();
                          int[] index = {0};
                          xml.set("instancesSet", reservation, i -> i.write(xml, index[0]++));
                        });
                    return xml.text("nextToken", page.nextCursor());
                  });
        });
  }

  private static Map<String, List<Ec2Instance>> byReservation(List<Ec2Instance> instances) {
    Map<String, List<Ec2Instance>> out = new LinkedHashMap<>();
    for (Ec2Instance i : instances) {
      out.computeIfAbsent(i.instance().launchId(), k -> new ArrayList<>()).add(i);
    }
    return out;
  }
}
