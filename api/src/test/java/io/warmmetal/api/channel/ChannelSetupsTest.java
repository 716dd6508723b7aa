package io.warmmetal.api.channel;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The bound on channels set up at once: places up to it; beyond, a wait in line, first come first
 * served, each place freed once however often it ends; a wait too long refused.
 */
@ExtendWith(VertxExtension.class)
class ChannelSetupsTest {

  @Test
  void placesUpToTheBoundThenTurnsInOrder(Vertx vertx) {
    ChannelSetups setups = new ChannelSetups(vertx, 2, Duration.ofMinutes(1));
    List<Future<ChannelSetups.Permit>> first = List.of(setups.begin(), setups.begin());
    assertThat(first).allMatch(Future::succeeded);
    List<Future<ChannelSetups.Permit>> queued = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      queued.add(setups.begin());
    }
    assertThat(queued).noneMatch(Future::isComplete);
    assertThat(setups.waiting()).isEqualTo(3);

    first.get(0).result().end();
    first
        .get(0)
        .result()
        .end(); // its hello ended it, then its socket closed: one place freed, not two
    assertThat(queued.get(0).succeeded()).as("the first in line").isTrue();
    assertThat(queued.subList(1, 3)).noneMatch(Future::isComplete);
    assertThat(setups.underWay()).isEqualTo(2);

    first.get(1).result().end();
    queued.get(0).result().end();
    assertThat(queued.subList(1, 3)).allMatch(Future::succeeded);
    queued.get(1).result().end();
    queued.get(2).result().end();
    assertThat(setups.underWay()).isZero();
    assertThat(setups.waiting()).isZero();
  }

  @Test
  void aWaitLongerThanTheLimitIsRefused(Vertx vertx) {
    ChannelSetups setups = new ChannelSetups(vertx, 1, Duration.ofMillis(50));
    ChannelSetups.Permit held = setups.begin().result();
    Future<ChannelSetups.Permit> late = setups.begin();
    assertThat(late.cause()).as("refused, not queued forever").isNull(); // waiting yet
    late.otherwiseEmpty().await();
    assertThat(late.failed()).isTrue();
    assertThat(late.cause().getMessage()).contains("no turn");
    assertThat(setups.waiting()).isZero();
    held.end();
    assertThat(setups.underWay()).isZero(); // the refused one took no place
  }
}
