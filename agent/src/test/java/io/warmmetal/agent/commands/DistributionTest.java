package io.warmmetal.agent.commands;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;
import org.junit.jupiter.api.Test;

class DistributionTest {

  @Test
  void samplesStayWithinTheirBoundsAndCenterOnTheMode() {
    Random random = new Random(7);
    Distribution uniform = Distribution.parse("uniform:1s:3s");
    Distribution triangular = Distribution.parse("triangular:1s:2s:6s");
    double sum = 0;
    for (int i = 0; i < 10_000; i++) {
      assertThat(uniform.sampleMs(random)).isBetween(1000L, 3000L);
      long t = triangular.sampleMs(random);
      assertThat(t).isBetween(1000L, 6000L);
      sum += t;
    }
    assertThat(sum / 10_000)
        .isBetween(2800.0, 3200.0); // the triangular mean is (1 + 2 + 6) / 3 = 3 s
    assertThat(Distribution.parse("fixed:250ms").sampleMs(random)).isEqualTo(250);
    assertThatThrownBy(() -> Distribution.parse("gaussian:1s")).hasMessageContaining("gaussian");
    assertThatThrownBy(() -> Distribution.parse("uniform:1s")).hasMessageContaining("uniform:1s");
  }
}
