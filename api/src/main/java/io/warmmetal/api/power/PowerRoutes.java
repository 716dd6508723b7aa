package io.warmmetal.api.power;

import io.warmmetal.api.http.Operations;
import io.warmmetal.api.http.Params;

/** A machine's power control: settings, observed state, switching by hand. */
public final class PowerRoutes {
  private PowerRoutes() {}

  /** {@code configured}: told after a machine's power control changed (the standby tier may now switch it). */
  public static void mount(Operations ops, MachinePower power, Runnable configured) {
    ops.json("getMachinePower", 200, ctx -> {
      Params p = Params.of(ctx);
      return power.describe(p.path("machineId"), Boolean.TRUE.equals(p.queryBoolean("observe")));
    });
    ops.json("setMachinePower", 200, ctx -> {
      Params p = Params.of(ctx);
      return power.configure(p.path("machineId"), p.body()).onSuccess(x -> configured.run());
    });
    ops.json("powerOnMachine", 200, ctx -> power.switchTo(Params.of(ctx).path("machineId"), PowerState.ON,
        "switched on by an operator", true));
    ops.json("powerOffMachine", 200, ctx -> power.switchTo(Params.of(ctx).path("machineId"), PowerState.OFF,
        "switched off by an operator", true));
  }
}
