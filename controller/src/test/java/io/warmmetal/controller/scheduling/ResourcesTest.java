package io.warmmetal.controller.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The shortcuts the scheduler's checks take answer as the operations they stand for. */
class ResourcesTest {
  private static final String GPU = "nvidia.com/gpu";

  /** Amounts around one another's edges, with and without extended resources. */
  private static List<Resources> samples() {
    List<Resources> all = new ArrayList<>();
    for (long cpu : new long[] {0, 500, 1000}) {
      for (long memory : new long[] {0, 1 << 20}) {
        Resources plain = Resources.of(cpu, memory);
        all.add(plain);
        all.add(plain.with(GPU, 1));
        all.add(plain.with(GPU, 2).with("pods", 1));
        all.add(plain.with("pods", 3));
      }
    }
    return all;
  }

  @Test
  void twoTogetherFitAsTheirSum() {
    List<Resources> samples = samples();
    Resources room = Resources.of(1500, 1 << 20).with(GPU, 2).with("pods", 3);
    int fitting = 0;
    for (Resources a : samples) {
      for (Resources b : samples) {
        for (Resources in : List.of(room, Resources.of(1500, 1 << 21))) {
          assertThat(in.fits(a, b)).as("%s + %s in %s", a, b, in).isEqualTo(in.fits(a.plus(b)));
          fitting += in.fits(a, b) ? 1 : 0;
        }
      }
    }
    assertThat(fitting).isPositive().isLessThan(samples.size() * samples.size() * 2);
  }

  @Test
  void aLimitCountsOnlyTheResourcesItNames() {
    Resources gpusOnly = Resources.of(1000, 1 << 20).with(GPU, 1);
    for (Resources need : samples()) {
      for (Resources limit : List.of(gpusOnly, Resources.of(1000, 1 << 20))) {
        assertThat(limit.fitsCounting(need))
            .as("%s within %s", need, limit)
            .isEqualTo(limit.fits(need.onlyExtended(limit.extended().keySet())));
      }
    }
  }

  @Test
  void sumsAndDifferencesWithoutExtendedResourcesKeepTheOthers() {
    Resources gpu = Resources.of(1000, 10).with(GPU, 2);
    assertThat(gpu.plus(Resources.of(500, 5))).isEqualTo(new Resources(1500, 15, gpu.extended()));
    assertThat(Resources.of(500, 5).plus(gpu)).isEqualTo(new Resources(1500, 15, gpu.extended()));
    assertThat(gpu.minus(Resources.of(500, 5))).isEqualTo(new Resources(500, 5, gpu.extended()));
    assertThat(Resources.of(500, 5).minus(gpu)).isEqualTo(Resources.of(-500, -5).with(GPU, -2));
  }
}
