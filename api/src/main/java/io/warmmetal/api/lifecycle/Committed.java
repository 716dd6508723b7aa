package io.warmmetal.api.lifecycle;

import java.util.List;

/**
 * What a lifecycle transaction changed that others act on, told after it committed (never before: a
 * wake-up must not race its own commit). Subscribers: the agent channel pushes the new commands;
 * the pool manager runs a pass when the pools' counts moved. A missed notice only delays: the
 * database stays the truth and both catch up on their timers.
 *
 * @param commandsFor machines that have new commands queued
 * @param poolsMoved machines were claimed, released, cordoned or uncordoned, or came (back) into
 *     the fleet or left it: the pools may need a pass
 */
public record Committed(List<String> commandsFor, boolean poolsMoved) {

  public static Committed commands(List<String> machineIds) {
    return new Committed(machineIds, false);
  }

  public static Committed poolsMoved(List<String> commandsFor) {
    return new Committed(commandsFor, true);
  }
}
