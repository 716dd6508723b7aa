package io.warmmetal.controller.karpenter;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.IntPredicate;

/**
 * A Karpenter node requirement ({@code spec.template.spec.requirements[]}): a label key, an
 * operator (In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte) and values; {@code minValues} asks
 * for that many distinct values among the candidate instance types (Karpenter's flexibility guard).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class Requirement {
  private String key;
  private String operator;
  private List<String> values = new ArrayList<>();
  private Integer minValues;

  public Requirement() {}

  public Requirement(String key, String operator, List<String> values) {
    this.key = key;
    this.operator = operator;
    this.values = new ArrayList<>(values);
  }

  /** Whether a node with these labels satisfies the requirement. */
  public boolean matches(Map<String, String> labels) {
    String value = labels.get(key);
    // Only the ordering operators compare numbers: parsing for the others costs every plan dearly.
    return switch (operator) {
      case "In" -> value != null && values.contains(value);
      case "NotIn" -> value == null || !values.contains(value);
      case "Exists" -> value != null;
      case "DoesNotExist" -> value == null;
      case "Gt" -> ordered(value, order -> order > 0);
      case "Lt" -> ordered(value, order -> order < 0);
      case "Gte" -> ordered(value, order -> order >= 0);
      case "Lte" -> ordered(value, order -> order <= 0);
      default -> throw new IllegalArgumentException("unknown operator " + operator);
    };
  }

  private boolean ordered(String value, IntPredicate holds) {
    Integer order = compare(value);
    return order != null && holds.test(order);
  }

  /**
   * The label's value against the single numeric value, or null when they cannot be compared (never
   * matches).
   */
  private Integer compare(String value) {
    if (value == null || values.size() != 1) {
      return null;
    }
    try {
      return Long.compare(Long.parseLong(value), Long.parseLong(values.get(0)));
    } catch (NumberFormatException e) {
      return null;
    }
  }

  public String getKey() {
    return key;
  }

  public void setKey(String key) {
    this.key = key;
  }

  public String getOperator() {
    return operator;
  }

  public void setOperator(String operator) {
    this.operator = operator;
  }

  @JsonInclude(JsonInclude.Include.NON_EMPTY) // Exists and DoesNotExist carry none
  public List<String> getValues() {
    return values;
  }

  public void setValues(List<String> values) {
    this.values = values;
  }

  public Integer getMinValues() {
    return minValues;
  }

  public void setMinValues(Integer minValues) {
    this.minValues = minValues;
  }
}
