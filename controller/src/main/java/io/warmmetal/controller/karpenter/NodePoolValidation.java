package io.warmmetal.controller.karpenter;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Taint;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * What makes a NodePool invalid, as Karpenter judges it: its CRD's schema (required fields, enums,
 * patterns, bounds), the CEL rules in that CRD, and its runtime validation ({@code
 * RuntimeValidate}: qualified names, restricted labels, duplicate taints, well-known values). The
 * controller checks all of them itself: an API server before 1.25 ignores the CEL rules, and a
 * NodePool written before the CRD was installed was never checked at all. A NodePool with problems
 * is left out of provisioning and disruption and says why in its {@code ValidationSucceeded}
 * condition; the others carry on.
 */
public final class NodePoolValidation {
  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final Pattern NAME = Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
  private static final Pattern DURATION_OR_NEVER = Pattern.compile("(([0-9]+(s|m|h))+|Never)");
  private static final Pattern DURATION = Pattern.compile("([0-9]+(s|m|h))+");
  private static final Pattern BUDGET_DURATION =
      Pattern.compile("((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)");
  private static final Pattern BUDGET_NODES = Pattern.compile("((100|[0-9]{1,2})%|[0-9]+)");
  private static final Pattern QUANTITY =
      Pattern.compile(
          "(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?");
  private static final Set<String> OPERATORS =
      Set.of("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte");
  private static final Set<String> EFFECTS = Set.of("NoSchedule", "PreferNoSchedule", "NoExecute");
  private static final Set<String> POLICIES =
      Set.of("WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced");
  private static final Set<String> REASONS = Set.of("Underutilized", "Empty", "Drifted");

  /** Keys of the karpenter.sh domain a NodePool may still name (upstream's CEL exceptions). */
  private static final Set<String> KARPENTER_KEYS_ALLOWED =
      Set.of(WellKnown.CAPACITY_TYPE_LABEL, WellKnown.NODEPOOL_LABEL);

  private static final Set<String> CAPACITY_TYPES = Set.of("on-demand", "spot", "reserved");

  private NodePoolValidation() {}

  /** The NodePool's problems, each naming its field; empty when it is valid. */
  public static List<String> problems(NodePool pool) {
    List<String> problems = new ArrayList<>();
    NodePool.Spec spec = pool.getSpec();
    if (spec == null || spec.template == null || spec.template.spec == null) {
      problems.add("spec.template.spec is required");
      return problems;
    }
    template(spec.template, problems);
    if (spec.weight != null && (spec.weight < 1 || spec.weight > 100)) {
      problems.add("spec.weight: " + spec.weight + " is not between 1 and 100");
    }
    if (spec.limits != null) {
      spec.limits.forEach(
          (name, q) -> {
            if (q == null || !QUANTITY.matcher(quantity(q)).matches()) {
              problems.add(
                  "spec.limits."
                      + name
                      + ": '"
                      + (q == null ? "" : quantity(q))
                      + "' is not a quantity");
            }
          });
    }
    if (spec.disruption != null) {
      disruption(spec.disruption, problems);
    }
    if (spec.replicas != null) {
      if (spec.replicas < 0) {
        problems.add("spec.replicas: must be 0 or more");
      }
      if (spec.limits != null
          && !spec.limits.isEmpty()
          && !Set.of("nodes").containsAll(spec.limits.keySet())) {
        problems.add("spec.limits: only 'limits.nodes' is supported on static NodePools");
      }
      if (spec.weight != null) {
        problems.add("spec.weight: 'weight' is not supported on static NodePools");
      }
    }
    return problems;
  }

  private static void template(NodeClaimTemplate template, List<String> problems) {
    NodeClaimTemplate.Spec spec = template.spec;
    NodeClassReference ref = spec.nodeClassRef;
    if (ref == null) {
      problems.add("spec.template.spec.nodeClassRef is required");
    } else {
      for (var field :
          Map.of("group", nonNull(ref.group), "kind", nonNull(ref.kind), "name", nonNull(ref.name))
              .entrySet()) {
        if (field.getValue().isEmpty()) {
          problems.add("spec.template.spec.nodeClassRef." + field.getKey() + " may not be empty");
        }
      }
      if (nonNull(ref.group).contains("/")) {
        problems.add(
            "spec.template.spec.nodeClassRef.group: '" + ref.group + "' may not contain '/'");
      }
    }
    if (template.metadata != null && template.metadata.labels != null) {
      if (template.metadata.labels.size() > 100) {
        problems.add("spec.template.metadata.labels: more than 100");
      }
      template.metadata.labels.forEach(
          (key, value) -> {
            String field = "spec.template.metadata.labels[" + key + "]";
            keyProblems(key, field, problems);
            if (!isLabelValue(value)) {
              problems.add(field + ": '" + value + "' is not a valid label value");
            }
          });
    }
    if (spec.requirements == null) {
      problems.add("spec.template.spec.requirements is required");
    } else {
      if (spec.requirements.size() > 100) {
        problems.add("spec.template.spec.requirements: more than 100");
      }
      for (int i = 0; i < spec.requirements.size(); i++) {
        requirement(
            spec.requirements.get(i), "spec.template.spec.requirements[" + i + "]", problems);
      }
    }
    Set<String> keyEffects = new HashSet<>();
    taints(spec.taints, "spec.template.spec.taints", keyEffects, problems);
    taints(spec.startupTaints, "spec.template.spec.startupTaints", keyEffects, problems);
    if (spec.expireAfter != null && !DURATION_OR_NEVER.matcher(spec.expireAfter).matches()) {
      problems.add(
          "spec.template.spec.expireAfter: '"
              + spec.expireAfter
              + "' is not a duration such as 720h, or Never");
    }
    if (spec.terminationGracePeriod != null
        && !DURATION.matcher(spec.terminationGracePeriod).matches()) {
      problems.add(
          "spec.template.spec.terminationGracePeriod: '"
              + spec.terminationGracePeriod
              + "' is not a duration such as 48h");
    }
  }

  /** One requirement's problems (also what a NodeClaim's requirements must satisfy). */
  public static void requirement(Requirement r, String field, List<String> problems) {
    String key = r.getKey();
    String op = r.getOperator();
    if (key == null || key.isEmpty()) {
      problems.add(field + ".key is required");
      return;
    }
    keyProblems(key, field + ".key", problems);
    if (op == null || !OPERATORS.contains(op)) {
      problems.add(field + ".operator: '" + op + "' is not one of " + new TreeSet<>(OPERATORS));
      return;
    }
    List<String> values = r.getValues() == null ? List.of() : r.getValues();
    for (String v : values) {
      if (!isLabelValue(v)) {
        problems.add(field + ".values: '" + v + "' is not a valid label value");
      }
    }
    if (op.equals("In") && values.isEmpty()) {
      problems.add(field + ": requirements with operator 'In' must have a value defined");
    }
    if (Set.of("Gt", "Lt", "Gte", "Lte").contains(op)
        && (values.size() != 1 || !nonNegativeInteger(values.get(0)))) {
      problems.add(
          field
              + ": requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value");
    }
    Integer min = r.getMinValues();
    if (min != null) {
      if (min < 1 || min > 50) {
        problems.add(field + ".minValues: " + min + " is not between 1 and 50");
      } else if (op.equals("In") && new HashSet<>(values).size() < min) {
        problems.add(
            field
                + ": requirements with 'minValues' must have at least that many values specified in the 'values' field");
      }
    }
    if (key.equals(WellKnown.CAPACITY_TYPE_LABEL)
        && op.equals("In")
        && values.stream().noneMatch(CAPACITY_TYPES::contains)) {
      problems.add(
          field
              + ": no valid values found in "
              + values
              + " for "
              + key
              + ", expected one of: "
              + new TreeSet<>(CAPACITY_TYPES));
    }
  }

  /** A label key: a qualified name, and none Karpenter keeps for itself. */
  private static void keyProblems(String key, String field, List<String> problems) {
    if (!isQualifiedName(key)) {
      problems.add(
          field
              + ": '"
              + key
              + "' is not a qualified name (an optional DNS subdomain prefix and '/', then up"
              + " to 63 alphanumerics, '-', '_' or '.')");
      return;
    }
    String domain = key.contains("/") ? key.substring(0, key.indexOf('/')) : key;
    if (key.equals(WellKnown.NODEPOOL_LABEL)) {
      problems.add(field + ": label \"karpenter.sh/nodepool\" is restricted");
    } else if (!KARPENTER_KEYS_ALLOWED.contains(key) && domain.endsWith("karpenter.sh")) {
      problems.add(field + ": label domain \"karpenter.sh\" is restricted");
    } else if (key.equals(WellKnown.HOSTNAME_LABEL)) {
      problems.add(field + ": label \"kubernetes.io/hostname\" is restricted");
    }
  }

  private static void taints(
      List<Taint> taints, String field, Set<String> keyEffects, List<String> problems) {
    if (taints == null) {
      return;
    }
    for (int i = 0; i < taints.size(); i++) {
      Taint t = taints.get(i);
      String at = field + "[" + i + "]";
      if (t.getKey() == null || t.getKey().isEmpty()) {
        problems.add(at + ".key is required");
      } else if (!isQualifiedName(t.getKey())) {
        problems.add(at + ".key: '" + t.getKey() + "' is not a qualified name");
      }
      if (t.getValue() != null && !t.getValue().isEmpty() && !isQualifiedName(t.getValue())) {
        problems.add(at + ".value: '" + t.getValue() + "' is not valid");
      }
      if (t.getEffect() == null || !EFFECTS.contains(t.getEffect())) {
        problems.add(
            at + ".effect: '" + t.getEffect() + "' is not one of " + new TreeSet<>(EFFECTS));
      }
      if (!keyEffects.add(t.getKey() + "=" + t.getEffect())) {
        problems.add(at + ": duplicate taint Key/Effect pair " + t.getKey() + "=" + t.getEffect());
      }
    }
  }

  private static void disruption(NodePool.Disruption d, List<String> problems) {
    if (d.consolidationPolicy != null && !POLICIES.contains(d.consolidationPolicy)) {
      problems.add(
          "spec.disruption.consolidationPolicy: '"
              + d.consolidationPolicy
              + "' is not one of "
              + new TreeSet<>(POLICIES));
    }
    if (d.consolidateAfter != null && !DURATION_OR_NEVER.matcher(d.consolidateAfter).matches()) {
      problems.add(
          "spec.disruption.consolidateAfter: '"
              + d.consolidateAfter
              + "' is not a duration such as 30s, or Never");
    }
    if (d.budgets == null) {
      return;
    }
    if (d.budgets.size() > 50) {
      problems.add("spec.disruption.budgets: more than 50");
    }
    for (int i = 0; i < d.budgets.size(); i++) {
      NodePool.Budget b = d.budgets.get(i);
      String at = "spec.disruption.budgets[" + i + "]";
      if (b.nodes == null || !BUDGET_NODES.matcher(b.nodes).matches()) {
        problems.add(at + ".nodes: '" + b.nodes + "' is not a count or a percentage up to 100%");
      }
      if ((b.schedule == null) != (b.duration == null)) {
        problems.add(at + ": 'schedule' must be set with 'duration'");
      }
      if (b.duration != null && !BUDGET_DURATION.matcher(b.duration).matches()) {
        problems.add(
            at
                + ".duration: '"
                + b.duration
                + "' is not hours and/or minutes, such as 8h or 1h30m");
      }
      if (b.schedule != null) {
        try {
          Cron.parse(b.schedule);
        } catch (RuntimeException e) {
          problems.add(
              at
                  + ".schedule: '"
                  + b.schedule
                  + "' is not a cron schedule ("
                  + e.getMessage()
                  + ")");
        }
      }
      if (b.reasons != null) {
        b.reasons.stream()
            .filter(r -> !REASONS.contains(r))
            .forEach(
                r ->
                    problems.add(
                        at + ".reasons: '" + r + "' is not one of " + new TreeSet<>(REASONS)));
      }
    }
  }

  /**
   * Kubernetes' IsQualifiedName: [prefix/]name, the prefix a DNS subdomain of at most 253, the name
   * at most 63.
   */
  static boolean isQualifiedName(String key) {
    String[] parts = key.split("/", -1);
    if (parts.length > 2) {
      return false;
    }
    String name = parts[parts.length - 1];
    if (parts.length == 2
        && (parts[0].isEmpty()
            || parts[0].length() > 253
            || !DNS_SUBDOMAIN.matcher(parts[0]).matches())) {
      return false;
    }
    return !name.isEmpty() && name.length() <= 63 && NAME.matcher(name).matches();
  }

  /**
   * Kubernetes' IsValidLabelValue: empty, or at most 63 alphanumerics, '-', '_' or '.' within
   * alphanumerics.
   */
  static boolean isLabelValue(String value) {
    return value != null
        && (value.isEmpty() || value.length() <= 63 && NAME.matcher(value).matches());
  }

  private static boolean nonNegativeInteger(String v) {
    try {
      return Long.parseLong(v) >= 0;
    } catch (NumberFormatException e) {
      return false;
    }
  }

  private static String nonNull(String s) {
    return s == null ? "" : s;
  }

  private static String quantity(Quantity q) {
    return q.getAmount() + (q.getFormat() == null ? "" : q.getFormat());
  }
}
