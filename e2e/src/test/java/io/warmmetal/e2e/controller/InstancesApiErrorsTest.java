package io.warmmetal.e2e.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.controller.cloudprovider.CloudProviderException.InsufficientCapacity;
import io.warmmetal.controller.instances.InstancesApi;
import java.net.URI;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * How the controller reads the API's refusals of a launch, against the real API: a shape that does
 * not exist, one a quota of 0 closes to the controller's project (answered alike, so as not to tell
 * the project it exists), and one with no machine free are all insufficient capacity — the
 * provisioner leaves such shapes out of its plans for a while.
 */
@ExtendWith(VertxExtension.class)
class InstancesApiErrorsTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static ObjectNode launch(String shape) {
    return JSON.createObjectNode().put("shape", shape);
  }

  @Test
  void missingQuotaClosedAndFullShapesAreInsufficientCapacity(Vertx vertx) throws Exception {
    try (ApiFixture fx = ApiFixture.start(vertx)) {
      fx.registerMachines(
          1, ApiFixture.facts(8, 32), false); // exists, never warm: nothing to launch on
      fx.registerMachines(1, ApiFixture.facts(16, 64), true);
      InstancesApi api =
          new InstancesApi(URI.create("http://127.0.0.1:" + fx.api.port()), fx.token("client"));

      InsufficientCapacity missing =
          catchThrowableOfType(InsufficientCapacity.class, () -> api.launch(launch("x86-99c-1g")));
      assertThat(missing).isNotNull();

      fx.client.put(
          "/v1/projects/default",
          ApiFixture.ADMIN,
          new JsonObject()
              .put(
                  "quotas",
                  new JsonObject().put("x86-16c-64g", new JsonObject().put("maxInstances", 0))));
      InsufficientCapacity closed =
          catchThrowableOfType(InsufficientCapacity.class, () -> api.launch(launch("x86-16c-64g")));
      assertThat(closed.getMessage())
          .isEqualTo(missing.getMessage().replace("x86-99c-1g", "x86-16c-64g"));

      InsufficientCapacity full =
          catchThrowableOfType(InsufficientCapacity.class, () -> api.launch(launch("x86-8c-32g")));
      assertThat(full.getMessage()).startsWith("503 InsufficientCapacity");
    }
  }
}
