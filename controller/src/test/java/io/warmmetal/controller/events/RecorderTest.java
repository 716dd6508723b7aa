package io.warmmetal.controller.events;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.warmmetal.controller.karpenter.NodeClaim;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Events as upstream's recorder publishes them: its reasons and messages, deduplicated within their timeout. */
@EnableKubernetesMockClient(crud = true)
class RecorderTest {
  KubernetesClient kube;

  private List<io.fabric8.kubernetes.api.model.Event> events(String namespace) throws InterruptedException {
    for (int i = 0; i < 50; i++) { // written off the caller's thread
      var list = kube.v1().events().inNamespace(namespace).list().getItems();
      if (!list.isEmpty()) {
        Thread.sleep(100); // and any more in flight
        return kube.v1().events().inNamespace(namespace).list().getItems();
      }
      Thread.sleep(50);
    }
    return List.of();
  }

  @Test
  void publishesOncePerDedupeWindowWithUpstreamsReasons() throws Exception {
    Pod pod = new PodBuilder().withNewMetadata().withName("web-1").withNamespace("shop").withUid("u-1").endMetadata()
        .build();
    NodeClaim claim = new NodeClaim();
    claim.getMetadata().setName("default-abcde");
    claim.getMetadata().setUid("u-2");
    try (Recorder recorder = new Recorder(kube)) {
      recorder.publish(KarpenterEvents.nominated(pod, claim, null));
      recorder.publish(KarpenterEvents.nominated(pod, claim, null)); // the same: deduplicated
      recorder.publish(KarpenterEvents.failedScheduling(pod, "no instance type fits"));
      List<io.fabric8.kubernetes.api.model.Event> shop = events("shop");
      assertThat(shop).hasSize(2);
      assertThat(shop).anySatisfy(e -> {
        assertThat(e.getReason()).isEqualTo("Nominated");
        assertThat(e.getType()).isEqualTo("Normal");
        assertThat(e.getMessage()).isEqualTo("Pod should schedule on: nodeclaim/default-abcde");
        assertThat(e.getInvolvedObject().getKind()).isEqualTo("Pod");
        assertThat(e.getInvolvedObject().getName()).isEqualTo("web-1");
        assertThat(e.getSource().getComponent()).isEqualTo("karpenter");
      });
      assertThat(shop).anySatisfy(e -> assertThat(e.getReason() + " " + e.getType() + " " + e.getMessage())
          .isEqualTo("FailedScheduling Warning Failed to schedule pod, no instance type fits"));

      // Cluster-scoped objects' events go to default, as client-go puts them.
      recorder.publish(KarpenterEvents.disruptionTerminating(null, claim, "empty"));
      List<io.fabric8.kubernetes.api.model.Event> cluster = events("default");
      assertThat(cluster).singleElement().satisfies(e -> {
        assertThat(e.getReason()).isEqualTo("DisruptionTerminating");
        assertThat(e.getMessage()).isEqualTo("Disrupting NodeClaim: Empty");
        assertThat(e.getInvolvedObject().getKind()).isEqualTo("NodeClaim");
        assertThat(e.getInvolvedObject().getApiVersion()).isEqualTo("karpenter.sh/v1");
      });
    }
  }

  @Test
  void nominationsAreRateLimitedAsUpstreamsAre() {
    Event.RateLimit limit = new Event.RateLimit(5, 10);
    int allowed = 0;
    for (int i = 0; i < 50; i++) { // a burst of 50 pods at once
      allowed += limit.tryAcquire() ? 1 : 0;
    }
    org.assertj.core.api.Assertions.assertThat(allowed).isBetween(10, 11); // the burst, and at most one refilled
  }
}
