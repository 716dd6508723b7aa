package io.warmmetal.api.power;

/** A server's power, as its BMC reports it. */
public enum PowerState {
  ON,
  OFF
}
