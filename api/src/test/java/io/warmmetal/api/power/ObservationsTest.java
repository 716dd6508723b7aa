package io.warmmetal.api.power;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.ErrorCode;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The rationing of live looks, without a BMC: sharing, reuse, forgetting, the cap. */
class ObservationsTest {
  private final AtomicInteger looks = new AtomicInteger();
  private Promise<PowerState> pending;

  private Future<PowerState> look() {
    looks.incrementAndGet();
    pending = Promise.promise();
    return pending.future();
  }

  @Test
  void callersShareALookReuseARecentOneAndAreCappedAcrossMachines() {
    Observations o = new Observations(Duration.ofMinutes(1), 1);
    Future<Observations.Answer> first = o.observe("m-1", this::look);
    Future<Observations.Answer> joined = o.observe("m-1", this::look);
    Future<Observations.Answer> other = o.observe("m-2", this::look);
    assertThat(other.failed()).isTrue();
    assertThat(((ApiError) other.cause()).code()).isEqualTo(ErrorCode.ServiceUnavailable);

    pending.complete(PowerState.ON);
    assertThat(looks).hasValue(1);
    assertThat(first.result().reused()).isFalse();
    assertThat(joined.result().reused()).isTrue();
    assertThat(joined.result().observation()).isEqualTo(first.result().observation());
    assertThat(o.observe("m-1", this::look).result().observation().state())
        .isEqualTo(PowerState.ON);
    assertThat(looks).hasValue(1);

    o.forget("m-1"); // switched: the next caller asks again
    Future<Observations.Answer> fresh = o.observe("m-1", this::look);
    pending.fail(new IllegalStateException("BMC did not answer"));
    assertThat(looks).hasValue(2);
    assertThat(fresh.result().observation().error()).isEqualTo("BMC did not answer");
    // Both looks ended: the cap lets another machine's start.
    assertThat(o.observe("m-2", this::look).failed()).isFalse();
    assertThat(looks).hasValue(3);
  }
}
