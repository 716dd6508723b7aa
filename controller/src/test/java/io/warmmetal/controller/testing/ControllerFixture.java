package io.warmmetal.controller.testing;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.warmmetal.controller.Controller;
import io.warmmetal.controller.karpenter.NodeClassReference;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.scheduling.Resources;
import io.warmmetal.protocol.testing.Await;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * What a running controller's tests start from: a node class and a NodePool, both "default", and
 * settings that pass within milliseconds of an event.
 */
public final class ControllerFixture {
  private ControllerFixture() {}

  /** Creates them; the node class's fleet is a fake's, so its endpoint answers nothing. */
  public static void createDefaultPool(KubernetesClient kube) {
    WarmMetalNodeClass nodeClass = new WarmMetalNodeClass();
    nodeClass.getMetadata().setName("default");
    nodeClass.getSpec().endpoint = "http://127.0.0.1:1"; // the fake answers instead
    kube.resources(WarmMetalNodeClass.class).resource(nodeClass).create();
    NodePool pool = new NodePool();
    pool.getMetadata().setName("default");
    pool.getSpec().template.spec.nodeClassRef = new NodeClassReference();
    pool.getSpec().template.spec.nodeClassRef.group = WarmMetalNodeClass.GROUP;
    pool.getSpec().template.spec.nodeClassRef.kind = WarmMetalNodeClass.KIND;
    pool.getSpec().template.spec.nodeClassRef.name = "default";
    kube.resources(NodePool.class).resource(pool).create();
  }

  /** Passes 5 ms after events pause (100 ms at most), four launches at once, no pod nudges. */
  public static Controller.Settings settings() {
    return new Controller.Settings(
        Duration.ofMillis(5),
        Duration.ofMillis(100),
        Resources.NONE,
        4,
        false,
        Duration.ofMinutes(2));
  }

  /**
   * Runs passes until {@code done}, looking between them: a plan needs the informers to have seen
   * its pods first, and nothing else would run a pass in a test that steps them.
   */
  public static void passUntil(Controller controller, String what, BooleanSupplier done)
      throws InterruptedException {
    Await.until(what, () -> done.getAsBoolean() || passed(controller) && done.getAsBoolean());
  }

  private static boolean passed(Controller controller) {
    try {
      controller.passNow();
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (Exception e) {
      throw new AssertionError("a pass failed", e);
    }
  }
}
