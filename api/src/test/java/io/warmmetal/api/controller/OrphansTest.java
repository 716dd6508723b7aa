package io.warmmetal.api.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.controller.claims.NodeClaimWriter;
import io.warmmetal.controller.claims.NodeClaims;
import io.warmmetal.controller.instances.WarmMetalCloudProvider;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.state.Definitions;
import io.warmmetal.controller.termination.Orphans;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Garbage collection against the real API: an instance whose NodeClaim is gone is terminated,
 * others are not.
 */
@ExtendWith(VertxExtension.class)
@EnableKubernetesMockClient(crud = true)
class OrphansTest {
  KubernetesClient kube;

  private static String launch(ApiFixture fx, String token, String claimUid) {
    return fx.client
        .post(
            "/v1/instances",
            token,
            new JsonObject()
                .put("shape", "x86-16c-64g")
                .put("labels", new JsonObject().put("warmmetal.io/nodeclaim-uid", claimUid)))
        .body()
        .getJsonArray("instances")
        .getJsonObject(0)
        .getString("id");
  }

  private static String state(ApiFixture fx, String id) {
    return fx.client.get("/v1/instances/" + id, ApiFixture.ADMIN).body().getString("state");
  }

  @Test
  void anInstanceWhoseNodeClaimIsGoneIsTerminatedAndOnlyThatOne(Vertx vertx) throws Exception {
    try (ApiFixture fx = ApiFixture.start(vertx)) {
      fx.registerMachines(3, ApiFixture.facts(16, 64), true);
      String token = fx.token("client");
      String orphan = launch(fx, token, "uid-of-a-deleted-claim");
      String owned = launch(fx, token, "uid-of-a-live-claim");
      String unlabelled =
          fx.client
              .post("/v1/instances", token, new JsonObject().put("shape", "x86-16c-64g"))
              .body()
              .getJsonArray("instances")
              .getJsonObject(0)
              .getString("id");
      NodeClaim live = new NodeClaim();
      live.getMetadata().setName("default-live");
      live.getMetadata().setUid("uid-of-a-live-claim");
      kube.secrets()
          .inNamespace("warmmetal-system")
          .resource(
              new SecretBuilder()
                  .withNewMetadata()
                  .withName("credentials")
                  .withNamespace("warmmetal-system")
                  .endMetadata()
                  .withStringData(Map.of("token", token))
                  .build())
          .create();
      WarmMetalNodeClass nodeClass = new WarmMetalNodeClass();
      nodeClass.getMetadata().setName("default");
      nodeClass.getSpec().endpoint = "http://127.0.0.1:" + fx.api.port();
      nodeClass.getSpec().credentialsSecretRef = new WarmMetalNodeClass.SecretKeyRef();
      nodeClass.getSpec().credentialsSecretRef.namespace = "warmmetal-system";
      nodeClass.getSpec().credentialsSecretRef.name = "credentials";
      Definitions defs =
          new Definitions(
              kube.resources(NodePool.class).runnableInformer(0).getStore(),
              kube.resources(WarmMetalNodeClass.class).runnableInformer(0).getStore());
      try (WarmMetalCloudProvider cloud =
          new WarmMetalCloudProvider(kube, defs, Duration.ofHours(1), () -> {})) {
        NodeClaimWriter writer =
            new NodeClaimWriter(
                kube,
                new NodeClaims(
                    kube.resources(NodeClaim.class).runnableInformer(0).getStore(),
                    Clock.systemUTC()));
        new Orphans(cloud, writer, Clock.systemUTC(), Duration.ZERO, Duration.ZERO)
            .reconcile(List.of(live), List.of(nodeClass));
      }

      assertThat(state(fx, orphan)).isIn("shutting-down", "terminated");
      assertThat(state(fx, owned)).isEqualTo("pending");
      assertThat(state(fx, unlabelled))
          .isEqualTo("pending"); // not launched for a NodeClaim: not ours to collect
    }
  }
}
