package io.warmmetal.api.power;

import io.vertx.ext.web.RoutingContext;
import io.warmmetal.api.http.Operations;
import io.warmmetal.api.http.Params;
import java.util.function.Predicate;

/** A machine's power control: settings, observed state, switching by hand. */
public final class PowerRoutes {
  private PowerRoutes() {}

  /**
   * {@code configured}: told after a machine's power control changed (the standby tier may now
   * switch it). {@code outOfBand}: whether the request's caller may see how machines are reached
   * (the contract's {@code out-of-band} permission, which {@code observe=true} also needs: the auth
   * handler checks that).
   */
  public static void mount(
      Operations ops,
      MachinePower power,
      Runnable configured,
      Predicate<RoutingContext> outOfBand) {
    ops.json(
        "getMachinePower",
        200,
        ctx -> {
          Params p = Params.of(ctx);
          return power
              .describe(p.path("machineId"), Boolean.TRUE.equals(p.queryBoolean("observe")))
              .map(view -> PowerJson.render(view, outOfBand.test(ctx)));
        });
    ops.json(
        "setMachinePower",
        200,
        ctx -> {
          Params p = Params.of(ctx);
          return power
              .configure(p.path("machineId"), p.body())
              .onSuccess(x -> configured.run())
              .map(view -> PowerJson.render(view, outOfBand.test(ctx)));
        });
    ops.json(
        "powerOnMachine",
        200,
        ctx ->
            power
                .switchTo(
                    Params.of(ctx).path("machineId"),
                    PowerState.ON,
                    "switched on by an operator",
                    true)
                .map(view -> PowerJson.render(view, outOfBand.test(ctx))));
    ops.json(
        "powerOffMachine",
        200,
        ctx ->
            power
                .switchTo(
                    Params.of(ctx).path("machineId"),
                    PowerState.OFF,
                    "switched off by an operator",
                    true)
                .map(view -> PowerJson.render(view, outOfBand.test(ctx))));
  }
}
