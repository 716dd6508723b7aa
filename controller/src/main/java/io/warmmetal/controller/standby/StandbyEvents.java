package io.warmmetal.controller.standby;

import io.warmmetal.controller.events.Event;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import java.time.Duration;
import java.util.List;

/** The events about a node class's pre-joined standby nodes (WarmMetal's own reasons). */
final class StandbyEvents {
  private static final Duration DEDUPE = Duration.ofMinutes(1);

  private StandbyEvents() {}

  static Event launched(WarmMetalNodeClass nodeClass, String entry, String instance) {
    return event(
        nodeClass,
        Event.NORMAL,
        "PreJoinedLaunched",
        "Joining a standby node for " + entry + ": instance " + instance,
        instance);
  }

  static Event shortOfMachines(WarmMetalNodeClass nodeClass, String entry, String why) {
    return event(
        nodeClass,
        Event.WARNING,
        "PreJoinedInsufficientCapacity",
        "Fewer standby nodes than asked for " + entry + ": " + why,
        entry);
  }

  static Event replaced(WarmMetalNodeClass nodeClass, String instance, String why) {
    return event(
        nodeClass,
        Event.WARNING,
        "PreJoinedReplaced",
        "Standby instance " + instance + " terminated: " + why,
        instance);
  }

  private static Event event(
      WarmMetalNodeClass nodeClass, String type, String reason, String message, String about) {
    return new Event(
        nodeClass,
        type,
        reason,
        message,
        List.of(nodeClass.getMetadata().getName(), about),
        DEDUPE);
  }
}
