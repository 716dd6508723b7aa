package io.warmmetal.protocol;

/** A frame (or the parameters in it) that breaks the protocol; the message names what is wrong. */
public final class MalformedFrame extends IllegalArgumentException {
  public MalformedFrame(String message) {
    super(message);
  }
}
