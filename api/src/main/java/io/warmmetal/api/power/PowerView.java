package io.warmmetal.api.power;

import java.time.OffsetDateTime;

/**
 * A machine's power as the API knows it: what it last switched it to and when, its settings (null:
 * no power control; the password never), and a live observation if one was asked for. {@link
 * PowerJson} renders it per caller.
 */
public record PowerView(
    String machineId,
    String powerState,
    OffsetDateTime powerChangedAt,
    PowerSettings settings,
    Observations.Answer observation) {

  PowerView withObservation(Observations.Answer answer) {
    return new PowerView(machineId, powerState, powerChangedAt, settings, answer);
  }
}
