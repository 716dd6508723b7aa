package io.warmmetal.api.power;

import io.vertx.core.json.JsonObject;
import io.warmmetal.api.http.Json;
import java.time.ZoneOffset;

/**
 * The JSON of a machine's power. How the machine is reached (BMC address, port, username, pin,
 * system, MAC, wake address) only for callers allowed out-of-band access: to the rest that is a map
 * of where to knock, so they see the driver and the recorded state. Never the password.
 */
public final class PowerJson {
  private PowerJson() {}

  public static JsonObject render(PowerView view, boolean outOfBand) {
    JsonObject json =
        new JsonObject()
            .put("machineId", view.machineId())
            .put("powerState", view.powerState())
            .put("powerChangedAt", Json.time(view.powerChangedAt()))
            .put("driver", view.settings() == null ? "none" : view.settings().driver());
    if (outOfBand && view.settings() != null) {
      json.mergeIn(view.settings().toJson());
    }
    Observations.Answer answer = view.observation();
    if (answer != null) {
      Observations.Observation o = answer.observation();
      if (o.state() != null) {
        json.put("observed", o.state().name().toLowerCase());
      } else {
        json.put("observeError", o.error());
      }
      json.put("observedAt", Json.time(o.at().atOffset(ZoneOffset.UTC)))
          .put("observationReused", answer.reused());
    }
    return json;
  }
}
