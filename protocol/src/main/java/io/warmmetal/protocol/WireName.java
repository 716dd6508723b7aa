package io.warmmetal.protocol;

import java.util.Locale;

/**
 * A constant spelled on the wire (a frame's type, a command's kind, a result's status): its name in
 * lower case, so the constant {@code HELLO} is the frame type {@code hello}.
 */
public interface WireName {
  String name();

  default String wire() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * The constant of {@code type} spelled {@code wire}; a name it does not know is a {@link
   * MalformedFrame}.
   */
  static <E extends Enum<E> & WireName> E parse(Class<E> type, String wire, String what) {
    for (E value : type.getEnumConstants()) {
      if (value.wire().equals(wire)) {
        return value;
      }
    }
    throw new MalformedFrame("unknown " + what + " '" + wire + "'");
  }
}
