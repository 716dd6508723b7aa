package io.warmmetal.controller.provisioning;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.warmmetal.controller.claims.NodeClaimWriter;
import io.warmmetal.controller.claims.NodeClaims;
import io.warmmetal.controller.cloudprovider.CloudProviderException.InsufficientCapacity;
import io.warmmetal.controller.cloudprovider.CloudProviderException.QuotaExceeded;
import io.warmmetal.controller.cloudprovider.CloudProviderException.Unavailable;
import io.warmmetal.controller.cloudprovider.FakeCloudProvider;
import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.events.WrittenEvents;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.Requirement;
import io.warmmetal.controller.karpenter.WellKnown;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a launch's answer does to its NodeClaim: launched → recorded; no capacity or no quota →
 * given up (deleted, its shapes resting); the fleet unavailable → kept, and launched again with the
 * same client token after the answer's Retry-After — an outage is never read as no capacity.
 */
@EnableKubernetesMockClient(crud = true)
class LauncherTest {
  KubernetesClient kube;
  private Recorder events;
  private final FakeCloudProvider cloud = new FakeCloudProvider();
  private int taken;
  private Launcher launcher;

  @BeforeEach
  void setUp() {
    events = new Recorder(kube);
    Clock clock = Clock.fixed(Instant.parse("2026-12-02T10:00:00Z"), ZoneOffset.UTC);
    NodeClaims claims =
        new NodeClaims(kube.resources(NodeClaim.class).runnableInformer(0).getStore(), clock);
    launcher = new Launcher(new NodeClaimWriter(kube, claims), cloud, events, clock, () -> taken++);
  }

  @AfterEach
  void tearDown() {
    events.close();
  }

  private NodeClaim claim(String name) {
    NodeClaim claim = new NodeClaim();
    claim.getMetadata().setName(name);
    claim.getMetadata().setLabels(new HashMap<>(Map.of(WellKnown.NODEPOOL_LABEL, "default")));
    claim.getMetadata().setAnnotations(new HashMap<>());
    claim.getSpec().requirements =
        List.of(
            new Requirement(
                WellKnown.INSTANCE_TYPE_LABEL, "In", List.of("x86-16c-64g", "x86-32c-128g")));
    return kube.resources(NodeClaim.class).resource(claim).create();
  }

  @Test
  void aLaunchedClaimRecordsItsInstanceTypeProviderAndCondition() {
    NodeClaim claim = claim("default-a");
    Launcher.Outcome outcome = launcher.launch(claim);
    assertThat(outcome).isInstanceOf(Launcher.Done.class);
    launcher.record((Launcher.Done) outcome);

    NodeClaim written = kube.resources(NodeClaim.class).withName("default-a").get();
    assertThat(written.getMetadata().getLabels())
        .containsEntry(WellKnown.INSTANCE_TYPE_LABEL, "x86-16c-64g");
    assertThat(written.getStatus().providerID).isEqualTo(cloud.instances().get(0).providerId());
    assertThat(written.getStatus().imageID).isEqualTo("v1-test");
    assertThat(Conditions.isTrue(written.getStatus().conditions, Conditions.LAUNCHED)).isTrue();
    assertThat(taken).isZero();
  }

  @Test
  void noCapacityDeletesTheClaimAndRestsItsShapes() throws Exception {
    NodeClaim claim = claim("default-b");
    cloud.failNextCreates(new InsufficientCapacity("503 InsufficientCapacity: none warm"));

    assertThat(launcher.launch(claim)).isInstanceOf(Launcher.GaveUp.class);

    assertThat(kube.resources(NodeClaim.class).withName("default-b").get()).isNull();
    assertThat(launcher.resting("x86-16c-64g")).isTrue();
    assertThat(launcher.resting("x86-32c-128g")).isTrue();
    assertThat(launcher.resting("arm-8c-32g")).isFalse();
    assertThat(WrittenEvents.in(kube, events, "default"))
        .anySatisfy(e -> assertThat(e.getReason()).isEqualTo("InsufficientCapacityError"));
  }

  @Test
  void aFullQuotaIsNoCapacityToo() {
    NodeClaim claim = claim("default-q");
    cloud.failNextCreates(new QuotaExceeded("403 QuotaExceeded"));
    assertThat(launcher.launch(claim)).isInstanceOf(Launcher.GaveUp.class);
    assertThat(kube.resources(NodeClaim.class).withName("default-q").get()).isNull();
  }

  @Test
  void anOutageKeepsTheClaimAndTheRetryLaunchesItOnceWithTheSameToken() {
    NodeClaim claim = claim("default-c");
    cloud.failNextCreates(
        new Unavailable("503 ServiceUnavailable: database unavailable", Duration.ofSeconds(3)));

    Launcher.Outcome first = launcher.launch(claim);
    assertThat(first)
        .isEqualTo(
            new Launcher.Later(
                Duration.ofSeconds(3), "503 ServiceUnavailable: database unavailable"));
    assertThat(kube.resources(NodeClaim.class).withName("default-c").get()).isNotNull();
    assertThat(launcher.resting("x86-16c-64g")).isFalse();

    assertThat(launcher.launch(claim)).isInstanceOf(Launcher.Done.class);
    assertThat(launcher.launch(claim)).isInstanceOf(Launcher.Done.class); // a replay
    assertThat(cloud.createCalls)
        .containsExactly(
            claim.getMetadata().getUid(),
            claim.getMetadata().getUid(),
            claim.getMetadata().getUid());
    assertThat(cloud.instances()).hasSize(1);
  }
}
