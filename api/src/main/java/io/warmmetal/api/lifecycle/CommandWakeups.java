package io.warmmetal.api.lifecycle;

import java.util.Collection;

/**
 * Told, after a transaction that queued commands has committed, which machines have new commands, so that whoever
 * holds those machines' agent connections sends them now. A missed wake-up only delays a command until the
 * channel's periodic catch-up: the command table stays the truth.
 */
@FunctionalInterface
public interface CommandWakeups {
  /** For components without a channel (and tests of the lifecycle alone). */
  CommandWakeups NONE = machineIds -> {};

  void commandsQueued(Collection<String> machineIds);
}
