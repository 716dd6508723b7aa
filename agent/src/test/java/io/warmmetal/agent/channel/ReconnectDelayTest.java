package io.warmmetal.agent.channel;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * Agents that lost their replica together do not come back together: their retries spread over half
 * the backoff.
 */
class ReconnectDelayTest {

  @Test
  void delaysSpreadOverTheSecondHalfOfTheBackoff() {
    Random random = new Random(7);
    long[] delays =
        LongStream.range(0, 10_000).map(i -> ChannelClient.reconnectDelay(8_000, random)).toArray();
    assertThat(LongStream.of(delays).min().orElseThrow()).isGreaterThanOrEqualTo(4_000L);
    assertThat(LongStream.of(delays).max().orElseThrow()).isLessThanOrEqualTo(8_000L);
    // Spread, not bunched: each tenth of the range gets its share (a tenth of 10,000, give or
    // take).
    long[] tenths = new long[10];
    for (long d : delays) {
      tenths[(int) Math.min(9, (d - 4_000) / 400)]++;
    }
    for (long n : tenths) {
      assertThat(n).isBetween(850L, 1_150L);
    }
    assertThat(ChannelClient.reconnectDelay(250, random)).isBetween(125L, 250L);
  }
}
