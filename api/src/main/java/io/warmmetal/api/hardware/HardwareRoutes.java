package io.warmmetal.api.hardware;

import io.warmmetal.api.http.Operations;
import io.warmmetal.api.http.Params;

/** {@code /v1/hardware}: the operator's hardware records (register, read, list, delete). */
public final class HardwareRoutes {
  private HardwareRoutes() {}

  public static void mount(Operations ops, HardwareRecords records) {
    ops.json(
        "listHardware",
        200,
        ctx -> {
          Params p = Params.of(ctx);
          return records.list(p.query("cursor"), p.limit());
        });
    ops.json("getHardware", 200, ctx -> records.get(Params.of(ctx).path("hardwareId")));
    ops.json(
        "putHardware",
        200,
        ctx -> {
          Params p = Params.of(ctx);
          return records.put(p.path("hardwareId"), p.body());
        });
    ops.noContent("deleteHardware", ctx -> records.delete(Params.of(ctx).path("hardwareId")));
  }
}
