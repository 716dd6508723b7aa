package io.warmmetal.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class LeaseIdentityTest {
  @Test
  void aReplicaIsNamedByItsPodThenItsHostNameNeverByALookupAndEachStartIsANewHolder() {
    String pod =
        Leadership.identity(Map.of("POD_NAME", "warmmetal-controller-7c9f", "HOSTNAME", "vm"));
    assertThat(pod).matches("warmmetal-controller-7c9f-[0-9a-f]{8}");
    assertThat(Leadership.identity(Map.of("POD_NAME", "warmmetal-controller-7c9f")))
        .as("a restarted replica holds the Lease anew")
        .isNotEqualTo(pod);
    assertThat(Leadership.identity(Map.of("HOSTNAME", "vm"))).matches("vm-[0-9a-f]{8}");
    assertThat(Leadership.identity(Map.of())).matches("warmmetal-controller-[0-9a-f]{8}");
  }
}
