package io.warmmetal.controller.provisioning;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import java.time.Instant;
import java.util.List;

/** Status conditions as Karpenter writes them: one per type, its transition time kept while its status holds. */
public final class Conditions {
  public static final String LAUNCHED = "Launched";
  public static final String REGISTERED = "Registered";
  public static final String INITIALIZED = "Initialized";

  private Conditions() {}

  public static boolean isTrue(List<Condition> conditions, String type) {
    return conditions.stream().anyMatch(c -> type.equals(c.getType()) && "True".equals(c.getStatus()));
  }

  public static void set(List<Condition> conditions, String type, boolean status, String reason, String message) {
    String value = status ? "True" : "False";
    for (Condition c : conditions) {
      if (type.equals(c.getType())) {
        if (!value.equals(c.getStatus())) {
          c.setLastTransitionTime(Instant.now().toString());
        }
        c.setStatus(value);
        c.setReason(reason);
        c.setMessage(message);
        return;
      }
    }
    conditions.add(new ConditionBuilder().withType(type).withStatus(value).withReason(reason).withMessage(message)
        .withLastTransitionTime(Instant.now().toString()).build());
  }
}
