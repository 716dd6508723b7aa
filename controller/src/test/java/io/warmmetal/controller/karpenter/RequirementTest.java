package io.warmmetal.controller.karpenter;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RequirementTest {
  private static final Map<String, String> NODE =
      Map.of("kubernetes.io/arch", "amd64", "warmmetal.io/cpu", "16", "team", "ml");

  @ParameterizedTest(name = "{0} {1} {2} → {3}")
  @CsvSource({
    "kubernetes.io/arch, In, amd64;arm64, true",
    "kubernetes.io/arch, In, arm64, false",
    "kubernetes.io/arch, NotIn, arm64, true",
    "kubernetes.io/arch, NotIn, amd64, false",
    "missing, NotIn, x, true",
    "team, Exists, '', true",
    "missing, Exists, '', false",
    "missing, DoesNotExist, '', true",
    "team, DoesNotExist, '', false",
    "warmmetal.io/cpu, Gt, 8, true",
    "warmmetal.io/cpu, Gt, 16, false",
    "warmmetal.io/cpu, Gte, 16, true",
    "warmmetal.io/cpu, Lt, 32, true",
    "warmmetal.io/cpu, Lt, 16, false",
    "warmmetal.io/cpu, Lte, 16, true",
    "missing, Lt, 100, false",
    "team, Gt, 1, false",
  })
  void operatorsMeanWhatKarpenterMeans(
      String key, String operator, String values, boolean expected) {
    List<String> list = values.isEmpty() ? List.of() : List.of(values.split(";"));
    assertThat(new Requirement(key, operator, list).matches(NODE)).isEqualTo(expected);
  }
}
