package io.warmmetal.controller.karpenter;

import io.fabric8.kubernetes.api.model.Quantity;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * What makes a NodeOverlay invalid, as Karpenter judges it: its CRD's schema and CEL rules (what an
 * API server of 1.25 or later refuses to store; older ones store it anyway) and its runtime
 * validation ({@code RuntimeValidate}: requirements as upstream's {@code ValidateRequirement}, and
 * capacity only of extended resources). An overlay with problems is applied to nothing and says so
 * in its {@code ValidationSucceeded} condition.
 */
public final class NodeOverlayValidation {
  private static final Pattern KEY =
      Pattern.compile(
          "([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(/))?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
  private static final Pattern VALUE =
      Pattern.compile("(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?");
  private static final Pattern PRICE = Pattern.compile("\\d+(\\.\\d+)?");
  private static final Pattern PRICE_ADJUSTMENT =
      Pattern.compile(
          "(([+-]{1}(\\d*\\.?\\d+))|(\\+{1}\\d*\\.?\\d+%)|(^(-\\d{1,2}(\\.\\d+)?%)$)|(-100%))");
  private static final Pattern QUANTITY =
      Pattern.compile(
          "(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?");
  private static final Set<String> OPERATORS =
      Set.of("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte");
  private static final Set<String> ORDERING = Set.of("Gt", "Lt", "Gte", "Lte");

  /** Upstream's WellKnownResources: what a NodeOverlay's capacity may not name. */
  public static final Set<String> WELL_KNOWN_RESOURCES =
      Set.of("cpu", "memory", "ephemeral-storage", "pods");

  /** Upstream's WellKnownLabels: never restricted, and offerings may leave them undefined. */
  public static final Set<String> WELL_KNOWN_LABELS =
      Set.of(
          WellKnown.NODEPOOL_LABEL,
          WellKnown.ZONE_LABEL,
          WellKnown.REGION_LABEL,
          WellKnown.INSTANCE_TYPE_LABEL,
          WellKnown.ARCH_LABEL,
          WellKnown.OS_LABEL,
          WellKnown.CAPACITY_TYPE_LABEL,
          "node.kubernetes.io/windows-build");

  private static final Set<String> CAPACITY_TYPES = Set.of("on-demand", "spot", "reserved");

  private NodeOverlayValidation() {}

  /** Every problem: the schema's and CEL's, then the runtime validation's. Empty when valid. */
  public static List<String> problems(NodeOverlay overlay) {
    List<String> problems = schemaProblems(overlay);
    problems.addAll(runtimeProblems(overlay));
    return problems;
  }

  /** What the CRD's schema and CEL rules refuse (an API server of 1.25+ never stores it). */
  public static List<String> schemaProblems(NodeOverlay overlay) {
    List<String> problems = new ArrayList<>();
    NodeOverlay.Spec spec = overlay.getSpec();
    if (spec == null || spec.requirements == null) {
      problems.add("spec.requirements: Required value");
      return problems;
    }
    if (spec.requirements.size() > 100) {
      problems.add("spec.requirements: Too many: must have at most 100 items");
    }
    for (int i = 0; i < spec.requirements.size(); i++) {
      schemaRequirement(spec.requirements.get(i), "spec.requirements[" + i + "]", problems);
    }
    // The list's CEL rules, with upstream's messages.
    if (spec.requirements.stream().anyMatch(r -> "NotIn".equals(r.getOperator()) && noValues(r))) {
      problems.add(
          "spec.requirements: requirements with operator 'NotIn' must have a value defined");
    }
    if (spec.requirements.stream().anyMatch(r -> "In".equals(r.getOperator()) && noValues(r))) {
      problems.add("spec.requirements: requirements with operator 'In' must have a value defined");
    }
    if (spec.requirements.stream()
        .anyMatch(r -> ORDERING.contains(r.getOperator()) && !singleNonNegativeInteger(r))) {
      problems.add(
          "spec.requirements: requirements operator 'Gt', 'Lt', 'Gte' or 'Lte' must have a single"
              + " positive integer value");
    }
    if (spec.price != null && !PRICE.matcher(spec.price).matches()) {
      problems.add(
          "spec.price: Invalid value: \"" + spec.price + "\": should match '^\\d+(\\.\\d+)?$'");
    }
    if (spec.priceAdjustment != null && !PRICE_ADJUSTMENT.matcher(spec.priceAdjustment).matches()) {
      problems.add(
          "spec.priceAdjustment: Invalid value: \""
              + spec.priceAdjustment
              + "\": a signed price or percentage such as +10%, -15% or -0.5");
    }
    if (spec.capacity != null) {
      spec.capacity.forEach(
          (name, quantity) -> {
            if (quantity == null || !QUANTITY.matcher(amount(quantity)).matches()) {
              problems.add("spec.capacity." + name + ": not a quantity");
            }
          });
      if (spec.capacity.keySet().stream().anyMatch(WELL_KNOWN_RESOURCES::contains)) {
        problems.add("spec.capacity: invalid resource restricted");
      }
    }
    if (spec.weight != null && (spec.weight < 1 || spec.weight > 10000)) {
      problems.add("spec.weight: " + spec.weight + " is not between 1 and 10000");
    }
    if (spec.price != null && spec.priceAdjustment != null) {
      problems.add("spec: cannot set both 'price' and 'priceAdjustment'");
    }
    return problems;
  }

  private static void schemaRequirement(Requirement r, String field, List<String> problems) {
    String key = r.getKey();
    if (key == null) {
      problems.add(field + ".key: Required value");
    } else {
      if (key.length() > 316 || !KEY.matcher(key).matches()) {
        problems.add(field + ".key: '" + key + "' is not a label key");
      }
      if (!key.equals(WellKnown.CAPACITY_TYPE_LABEL)
          && !key.equals(WellKnown.NODEPOOL_LABEL)
          && (key.contains("/") ? key.substring(0, key.indexOf('/')) : key)
              .endsWith("karpenter.sh")) { // the CEL rule's self.find("^([^/]+)")
        problems.add(field + ".key: label domain \"karpenter.sh\" is restricted");
      }
      if (key.equals(WellKnown.HOSTNAME_LABEL)) {
        problems.add(field + ".key: label \"kubernetes.io/hostname\" is restricted");
      }
    }
    if (r.getOperator() == null || !OPERATORS.contains(r.getOperator())) {
      problems.add(
          field + ".operator: '" + r.getOperator() + "' is not one of " + new TreeSet<>(OPERATORS));
    }
    for (String value : values(r)) {
      if (value == null || value.length() > 63 || !VALUE.matcher(value).matches()) {
        problems.add(field + ".values: '" + value + "' is not a label value");
      }
    }
  }

  /**
   * Upstream's {@code RuntimeValidate}: each requirement as {@code ValidateRequirement} judges it
   * (the well-known labels, {@code karpenter.sh/nodepool} among them, allowed), and a capacity of
   * extended resources only.
   */
  public static List<String> runtimeProblems(NodeOverlay overlay) {
    List<String> problems = new ArrayList<>();
    NodeOverlay.Spec spec = overlay.getSpec();
    if (spec == null) {
      return problems;
    }
    for (Requirement r : spec.requirements == null ? List.<Requirement>of() : spec.requirements) {
      List<String> wrong = new ArrayList<>();
      requirement(r, wrong);
      wrong.forEach(e -> problems.add("invalid value: " + e + " in requirements, restricted"));
      if ("NotIn".equals(r.getOperator()) && noValues(r)) {
        problems.add(
            "key "
                + r.getKey()
                + " with operator "
                + r.getOperator()
                + " must have a value defined");
      }
    }
    if (spec.capacity != null) {
      new TreeSet<>(spec.capacity.keySet())
          .stream()
              .filter(WELL_KNOWN_RESOURCES::contains)
              .forEach(n -> problems.add("invalid capacity: " + n + " in resource, restricted"));
    }
    return problems;
  }

  /** Upstream's {@code ValidateRequirement}. */
  private static void requirement(Requirement r, List<String> errors) {
    String key =
        r.getKey() == null ? "" : WellKnown.NORMALIZED.getOrDefault(r.getKey(), r.getKey());
    String op = r.getOperator();
    List<String> values = values(r);
    if (op == null || !OPERATORS.contains(op)) {
      errors.add(
          "key "
              + key
              + " has an unsupported operator "
              + op
              + " not in "
              + new TreeSet<>(OPERATORS));
    }
    String domain = domain(key);
    if (!WELL_KNOWN_LABELS.contains(key)
        && (domain.equals("karpenter.sh")
            || domain.endsWith(".karpenter.sh")
            || key.equals(WellKnown.HOSTNAME_LABEL))) {
      errors.add(
          "using label "
              + key
              + " is not allowed as it might interfere with the internal provisioning logic");
    }
    if (key.equals(WellKnown.CAPACITY_TYPE_LABEL)
        && "In".equals(op)
        && values.stream().noneMatch(CAPACITY_TYPES::contains)) {
      errors.add(
          "no valid values found in "
              + values
              + " for "
              + key
              + ", expected one of: "
              + new TreeSet<>(CAPACITY_TYPES));
    }
    if (!NodePoolValidation.isQualifiedName(key)) {
      errors.add("key " + key + " is not a qualified name");
    }
    for (String value : values) {
      if (!NodePoolValidation.isLabelValue(value)) {
        errors.add("invalid value " + value + " for key " + key);
      }
    }
    if ("In".equals(op) && values.isEmpty()) {
      errors.add("key " + key + " with operator " + op + " must have a value defined");
    }
    if (ORDERING.contains(op) && !singleNonNegativeInteger(r)) {
      errors.add(
          "key " + key + " with operator " + op + " must have a single positive integer value");
    }
  }

  private static String domain(String key) {
    int slash = key.indexOf('/');
    return slash < 0 ? "" : key.substring(0, slash);
  }

  private static List<String> values(Requirement r) {
    return r.getValues() == null ? List.of() : r.getValues();
  }

  private static boolean noValues(Requirement r) {
    return values(r).isEmpty();
  }

  private static boolean singleNonNegativeInteger(Requirement r) {
    if (values(r).size() != 1) {
      return false;
    }
    try {
      return Integer.parseInt(values(r).get(0)) >= 0;
    } catch (NumberFormatException e) {
      return false;
    }
  }

  private static String amount(Quantity q) {
    return q.getAmount() + (q.getFormat() == null ? "" : q.getFormat());
  }
}
