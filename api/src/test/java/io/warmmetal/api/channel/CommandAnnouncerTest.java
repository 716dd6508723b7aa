package io.warmmetal.api.channel;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The announcement payloads: within PostgreSQL's NOTIFY limit, nothing lost, a replica's own ones
 * ignored.
 */
class CommandAnnouncerTest {

  @Test
  void manyMachinesSplitIntoPayloadsUnderTheLimitAndComeBackWhole() {
    CommandAnnouncer mine = new CommandAnnouncer(null);
    CommandAnnouncer other = new CommandAnnouncer(null);
    List<String> ids =
        IntStream.range(0, 2_000).mapToObj(i -> "m-" + String.format("%016x", i)).toList();

    List<String> payloads = mine.payloads(ids);

    assertThat(payloads)
        .hasSizeGreaterThan(1)
        .allSatisfy(p -> assertThat(p.length()).isLessThan(8000));
    List<String> heard = new ArrayList<>();
    payloads.forEach(p -> heard.addAll(other.fromOthers(p)));
    assertThat(heard).containsExactlyElementsOf(ids);
    payloads.forEach(p -> assertThat(mine.fromOthers(p)).isEmpty());
    assertThat(other.fromOthers("garbage without a replica")).isEmpty();
  }
}
