package io.warmmetal.controller.testing;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.util.HashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * fabric8's mock API server (CRUD, as {@code @EnableKubernetesMockClient(crud = true)} makes it)
 * and a client of it, for tests that run a whole controller on it.
 *
 * <p>Closing it does not fail on the mock server's own shutdown deadlock: a watch closed while the
 * server is still sending it events makes its {@code WatchEventsListener.onClosed} wait, on the
 * event loop, for senders that need that event loop, so the server cannot stop within its 10 s
 * ("Unable to close MockWebServer"). What the test checked is checked by then; the stuck fake is
 * left to give up on its own (its wait ends after a minute) and logged.
 */
public final class MockApiServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MockApiServer.class);

  private final KubernetesMockServer server;
  public final KubernetesClient kube;

  private MockApiServer(KubernetesMockServer server) {
    this.server = server;
    this.kube = server.createClient();
  }

  public static MockApiServer start() {
    KubernetesMockServer server =
        new KubernetesMockServer(
            new Context(Serialization.jsonMapper()),
            new MockWebServer(),
            new HashMap<>(),
            new KubernetesMixedDispatcher(new HashMap<>()),
            false);
    server.init();
    return new MockApiServer(server);
  }

  @Override
  public void close() {
    kube.close(); // every watch's connection gone at once
    try {
      server.destroy();
    } catch (IllegalStateException stuck) {
      if (!String.valueOf(stuck.getMessage()).contains("Unable to close MockWebServer")) {
        throw stuck;
      }
      LOG.warn("fabric8's mock server did not stop in time (a watch closed mid-send); left behind");
    }
  }
}
