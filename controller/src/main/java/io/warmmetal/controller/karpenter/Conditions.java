package io.warmmetal.controller.karpenter;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * Status conditions as Karpenter writes them (its {@code operatorpkg/status}): one per type, its
 * transition time kept while its status holds, a reason always (the CRDs require one, CamelCase)
 * and a message, and a {@code Ready} condition that is True when every condition it depends on is.
 */
public final class Conditions {
  // NodeClaim
  public static final String LAUNCHED = "Launched";
  public static final String REGISTERED = "Registered";
  public static final String INITIALIZED = "Initialized";
  public static final String DRIFTED = "Drifted";
  public static final String CONSOLIDATABLE = "Consolidatable";
  public static final String DRAINED = "Drained";
  public static final String CONSISTENT_STATE_FOUND = "ConsistentStateFound";
  public static final String INSTANCE_TERMINATING = "InstanceTerminating";
  // NodePool
  public static final String VALIDATION_SUCCEEDED = "ValidationSucceeded";
  public static final String NODE_CLASS_READY = "NodeClassReady";
  public static final String NODE_REGISTRATION_HEALTHY = "NodeRegistrationHealthy";
  // All
  public static final String READY = "Ready";

  /** What a NodeClaim's Ready stands on, as upstream's. */
  public static final List<String> NODECLAIM_READY_ON = List.of(LAUNCHED, REGISTERED, INITIALIZED);

  /** What a NodePool's Ready stands on, as upstream's. */
  public static final List<String> NODEPOOL_READY_ON =
      List.of(VALIDATION_SUCCEEDED, NODE_CLASS_READY);

  private Conditions() {}

  public static boolean isTrue(List<Condition> conditions, String type) {
    return conditions.stream()
        .anyMatch(c -> type.equals(c.getType()) && "True".equals(c.getStatus()));
  }

  public static Condition get(List<Condition> conditions, String type) {
    return conditions.stream().filter(c -> type.equals(c.getType())).findFirst().orElse(null);
  }

  /** Sets True or False; see {@link #set(List, String, String, String, String)}. */
  public static boolean set(
      List<Condition> conditions, String type, boolean status, String reason, String message) {
    return set(conditions, type, status ? "True" : "False", reason, message);
  }

  /**
   * Sets the condition ({@code True}, {@code False} or {@code Unknown}); its transition time moves
   * only when its status does. Returns whether anything changed, so a caller writes only then.
   */
  public static boolean set(
      List<Condition> conditions, String type, String status, String reason, String message) {
    // Upstream leaves the message empty when there is nothing to say; API servers before ~1.22
    // refuse an empty
    // string in a required field of a map-list item (it reads as null), so the reason stands in.
    String text = message == null || message.isEmpty() ? reason : message;
    for (Condition c : conditions) {
      if (type.equals(c.getType())) {
        boolean changed =
            !status.equals(c.getStatus())
                || !Objects.equals(reason, c.getReason())
                || !text.equals(c.getMessage());
        if (!status.equals(c.getStatus())) {
          c.setLastTransitionTime(Instant.now().toString());
        }
        c.setStatus(status);
        c.setReason(reason);
        c.setMessage(text);
        return changed;
      }
    }
    conditions.add(
        new ConditionBuilder()
            .withType(type)
            .withStatus(status)
            .withReason(reason)
            .withMessage(text)
            .withLastTransitionTime(Instant.now().toString())
            .build());
    return true;
  }

  /**
   * Sets {@code Ready} from the conditions it stands on: True when all are, False when one is False
   * (naming it), else Unknown. Returns whether it changed.
   */
  public static boolean setReady(List<Condition> conditions, List<String> on) {
    for (String type : on) {
      Condition c = get(conditions, type);
      if (c != null && "False".equals(c.getStatus())) {
        return set(
            conditions, READY, "False", "UnhealthyDependents", type + "=False: " + c.getMessage());
      }
    }
    List<String> pending = on.stream().filter(t -> !isTrue(conditions, t)).toList();
    return pending.isEmpty()
        ? set(conditions, READY, "True", READY, "")
        : set(
            conditions,
            READY,
            "Unknown",
            "AwaitingReconciliation",
            String.join(", ", pending) + " not True yet");
  }
}
