package io.warmmetal.controller.disruption;

import static io.warmmetal.controller.disruption.TestCluster.T0;
import static org.assertj.core.api.Assertions.assertThat;

import io.warmmetal.controller.karpenter.NodeClaim;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** expireAfter as upstream reads it, across the instant it runs out. */
class ExpirationTest {
  private final TestCluster cluster = new TestCluster();
  private final NodeClaim claim = cluster.node("a", cluster.small);

  @Test
  void aClaimExpiresOnceItHasLivedLongerThanItsExpireAfter() {
    claim.getSpec().expireAfter = "1h";
    assertThat(Expiration.expired(claim, T0.plus(Duration.ofMinutes(60)))).isFalse();
    assertThat(Expiration.expired(claim, T0.plus(Duration.ofMinutes(61)))).isTrue();
  }

  @Test
  void withoutExpireAfterKarpentersDefaultHoldsAndNeverOrAnUnreadableValueIsNever() {
    claim.getSpec().expireAfter = null;
    assertThat(Expiration.expired(claim, T0.plus(Duration.ofHours(719)))).isFalse();
    assertThat(Expiration.expired(claim, T0.plus(Duration.ofHours(721)))).isTrue();
    claim.getSpec().expireAfter = "Never";
    assertThat(Expiration.expired(claim, T0.plus(Duration.ofDays(3650)))).isFalse();
    claim.getSpec().expireAfter = "soon";
    assertThat(Expiration.expired(claim, T0.plus(Duration.ofDays(3650)))).isFalse();
  }
}
