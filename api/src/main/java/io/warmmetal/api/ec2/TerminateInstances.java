package io.warmmetal.api.ec2;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.warmmetal.api.auth.Permission;
import io.warmmetal.api.lifecycle.Instance;
import io.warmmetal.api.lifecycle.Lifecycle;
import java.util.ArrayList;
import java.util.List;

/**
 * TerminateInstances: every id is checked first (one that is not the caller's, or not there, and
 * none is touched), then each is terminated — idempotently, as the JSON API's DELETE — and answered
 * with its previous and current state.
 */
final class TerminateInstances {
  private TerminateInstances() {}

  static Action action(Lifecycle lifecycle, Pool db) {
    return new Action(
        "TerminateInstances",
        Permission.TERMINATE,
        List.of("InstanceId.N"),
        call -> {
          List<String> ids = call.params().list("InstanceId");
          if (ids.isEmpty()) {
            throw Ec2Error.missing("InstanceId.1");
          }
          if (ids.size() > 1000) {
            throw Ec2Error.invalidValue("InstanceId", "names more than 1000 instances");
          }
          return new InstanceSearch(call.caller().project(), Ec2Call.TOPOLOGY.zoneLabel(), ids)
              .page(db, null, ids.size())
              .compose(found -> terminate(lifecycle, call, found.items()));
        });
  }

  private static Future<Xml> terminate(Lifecycle lifecycle, Ec2Call call, List<Ec2Instance> found) {
    List<Future<Instance>> done = new ArrayList<>();
    for (Ec2Instance i : found) {
      done.add(lifecycle.terminate(i.instance().id(), call.caller()));
    }
    return Future.all(done)
        .map(
            all -> {
              Xml xml = call.response();
              int[] n = {0};
              xml.set(
                  "instancesSet",
                  found,
                  before -> {
                    Instance after = done.get(n[0]++).result();
                    xml.text("instanceId", after.id());
                    Ec2Instance.state(xml, "currentState", after.state());
                    Ec2Instance.state(xml, "previousState", before.instance().state());
                  });
              return xml;
            });
  }
}
