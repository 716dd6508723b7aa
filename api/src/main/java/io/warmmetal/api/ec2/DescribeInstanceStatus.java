package io.warmmetal.api.ec2;

import io.vertx.sqlclient.Pool;
import io.warmmetal.api.auth.Permission;
import io.warmmetal.api.lifecycle.InstanceState;
import java.util.EnumSet;
import java.util.List;

/**
 * DescribeInstanceStatus: running instances (every one with {@code IncludeAllInstances}), their
 * status checks read from the machine: its agent heard → {@code ok}, offline → {@code impaired}; a
 * pending instance is {@code initializing}.
 */
final class DescribeInstanceStatus {
  private DescribeInstanceStatus() {}

  static Action action(Pool db) {
    return new Action(
        "DescribeInstanceStatus",
        Permission.READ,
        List.of(
            "InstanceId.N",
            "IncludeAllInstances",
            "Filter.N.Name",
            "Filter.N.Value.N",
            "MaxResults",
            "NextToken"),
        call -> {
          QueryRequest p = call.params();
          List<String> ids = p.list("InstanceId");
          InstanceSearch search =
              new InstanceSearch(call.caller().project(), Ec2Call.TOPOLOGY.zoneLabel(), ids)
                  .filter(p.filters());
          if (!p.bool("IncludeAllInstances")) {
            search.inStates(EnumSet.of(InstanceState.RUNNING));
          }
          return search
              .page(db, p.string("NextToken"), call.maxResults(5, 1000, DescribeInstances.PAGE))
              .map(
                  page -> {
                    Xml xml = call.response();
                    xml.set("instanceStatusSet", page.items(), i -> status(xml, i));
                    return xml.text("nextToken", page.nextCursor());
                  });
        });
  }

  private static void status(Xml xml, Ec2Instance i) {
    InstanceState state = i.instance().state();
    String check =
        switch (state) {
          case PENDING -> "initializing";
          case RUNNING -> i.machineOnline() ? "ok" : "impaired";
          default -> "not-applicable";
        };
    String reachability =
        switch (check) {
          case "ok" -> "passed";
          case "impaired" -> "failed";
          case "initializing" -> "initializing";
          default -> null;
        };
    xml.text("instanceId", i.instance().id());
    xml.text("availabilityZone", i.zone());
    Ec2Instance.state(xml, "instanceState", state);
    for (String kind : List.of("systemStatus", "instanceStatus")) {
      xml.open(kind).text("status", check);
      if (reachability != null) {
        xml.set(
            "details",
            List.of("reachability"),
            name -> xml.text("name", name).text("status", reachability));
      }
      xml.close();
    }
  }
}
