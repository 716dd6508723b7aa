package io.warmmetal.controller.buffers;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * What an API server of 1.25 or later refuses of a CapacityBuffer by the CRD's CEL rules (their
 * messages verbatim, as the shipped CRD's {@code v1beta1} has them) — older API servers drop the
 * rules, so the controller holds buffers to them itself — and what upstream's buffer controller
 * refuses besides (a buffer naming neither a PodTemplate nor a workload). Schema rules (types,
 * minimums, quantities) every supported API server enforces itself.
 */
public final class BufferValidation {
  private BufferValidation() {}

  /** One of the CRD's {@code x-kubernetes-validations} on {@code spec}: its CEL and message. */
  record Rule(String cel, String message, Predicate<CapacityBuffer.Spec> holds) {}

  static final List<Rule> CEL =
      List.of(
          new Rule(
              "!has(self.podTemplateRef) || has(self.replicas) || has(self.limits)",
              "If X is set, replicas or limits must also be set",
              s -> s.podTemplateRef == null || s.replicas != null || s.limits != null),
          new Rule(
              "!(has(self.podTemplateRef) && has(self.scalableRef))",
              "You must define either PodTemplateRef or ScalableRef, but not both",
              s -> s.podTemplateRef == null || s.scalableRef == null));

  /** Upstream's buffer controller's words for a buffer that names nothing to copy. */
  static final String NEITHER = "Neither podTemplateRef nor scalableRef is set";

  /** The buffer's problems; none when it is valid. */
  public static List<String> problems(CapacityBuffer.Spec spec) {
    List<String> problems = new ArrayList<>();
    if (spec == null) {
      return List.of(NEITHER);
    }
    for (Rule rule : CEL) {
      if (!rule.holds().test(spec)) {
        problems.add(rule.message());
      }
    }
    if (spec.podTemplateRef == null && spec.scalableRef == null) {
      problems.add(NEITHER);
    }
    return problems;
  }
}
