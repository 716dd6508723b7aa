package io.warmmetal.controller.events;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.WellKnown;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Events as upstream's recorder publishes them: its reasons and messages, deduplicated within their
 * timeout.
 */
@EnableKubernetesMockClient(crud = true)
class RecorderTest {
  KubernetesClient kube;

  private List<io.fabric8.kubernetes.api.model.Event> events(Recorder recorder, String namespace)
      throws InterruptedException {
    return WrittenEvents.in(kube, recorder, namespace);
  }

  private static Pod pod(String name, String uid) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace("shop")
        .withUid(uid)
        .endMetadata()
        .build();
  }

  private static NodeClaim claim() {
    NodeClaim claim = new NodeClaim();
    claim.getMetadata().setName("default-abcde");
    claim.getMetadata().setUid("u-2");
    return claim;
  }

  @Test
  void publishesOncePerDedupeWindowWithUpstreamsReasons() throws Exception {
    Pod pod = pod("web-1", "u-1");
    NodeClaim claim = claim();
    try (Recorder recorder = new Recorder(kube)) {
      recorder.publish(KarpenterEvents.nominated(pod, claim, null));
      recorder.publish(KarpenterEvents.nominated(pod, claim, null)); // the same: deduplicated
      recorder.publish(KarpenterEvents.failedScheduling(pod, "no instance type fits"));
      List<io.fabric8.kubernetes.api.model.Event> shop = events(recorder, "shop");
      assertThat(shop).hasSize(2);
      assertThat(shop)
          .anySatisfy(
              e -> {
                assertThat(e.getReason()).isEqualTo("Nominated");
                assertThat(e.getType()).isEqualTo("Normal");
                assertThat(e.getMessage())
                    .isEqualTo("Pod should schedule on: nodeclaim/default-abcde");
                assertThat(e.getInvolvedObject().getKind()).isEqualTo("Pod");
                assertThat(e.getInvolvedObject().getName()).isEqualTo("web-1");
                assertThat(e.getSource().getComponent()).isEqualTo("karpenter");
              });
      assertThat(shop)
          .anySatisfy(
              e ->
                  assertThat(e.getReason() + " " + e.getType() + " " + e.getMessage())
                      .isEqualTo(
                          "FailedScheduling Warning Failed to schedule pod, no instance type fits"));

      // Cluster-scoped objects' events go to default, as client-go puts them.
      recorder.publish(KarpenterEvents.disruptionTerminating(null, claim, "empty"));
      List<io.fabric8.kubernetes.api.model.Event> cluster = events(recorder, "default");
      assertThat(cluster)
          .singleElement()
          .satisfies(
              e -> {
                assertThat(e.getReason()).isEqualTo("DisruptionTerminating");
                assertThat(e.getMessage()).isEqualTo("Disrupting NodeClaim: Empty");
                assertThat(e.getInvolvedObject().getKind()).isEqualTo("NodeClaim");
                assertThat(e.getInvolvedObject().getApiVersion()).isEqualTo("karpenter.sh/v1");
              });
    }
  }

  @Test
  void aCapacityBuffersVirtualPodIsToldNothing() throws Exception {
    Pod virtual = pod("capacity-buffer-web-1", "u-b-1");
    virtual
        .getMetadata()
        .setAnnotations(Map.of(WellKnown.CAPACITY_BUFFER_FAKE_POD_ANNOTATION, "true"));
    NodeClaim claim = claim();
    try (Recorder recorder = new Recorder(kube)) {
      recorder.publish(KarpenterEvents.nominated(virtual, claim, null));
      recorder.publish(KarpenterEvents.failedScheduling(virtual, "no instance type fits"));
      assertThat(events(recorder, "shop")).isEmpty(); // it is not in the cluster
    }
  }

  @Test
  void nominationsAreRateLimitedAsUpstreamsAre() {
    long start = System.nanoTime();
    Event.RateLimit limit = new Event.RateLimit(5, 10);
    int allowed = 0;
    for (int i = 0; i < 50; i++) { // a burst of 50 pods at once
      allowed += limit.tryAcquire() ? 1 : 0;
    }
    // The burst, and what refilled at 5 a second while the loop ran (none, unless a loaded machine
    // paused it).
    int refilled = (int) ((System.nanoTime() - start) / 1e9 * 5);
    assertThat(allowed).isBetween(10, 11 + refilled);
  }
}
