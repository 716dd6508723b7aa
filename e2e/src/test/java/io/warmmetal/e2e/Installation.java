package io.warmmetal.e2e;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.warmmetal.controller.Controller;
import io.warmmetal.controller.buffers.CapacityBuffer;
import io.warmmetal.controller.cloudprovider.CloudProvider;
import io.warmmetal.controller.cloudprovider.CloudProviderException;
import io.warmmetal.controller.instances.WarmMetalCloudProvider;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodeClassReference;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.metrics.KarpenterMetrics;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.scheduling.Resources;
import io.warmmetal.e2e.cluster.ControlPlane;
import io.warmmetal.protocol.testing.Await;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * WarmMetal installed in a real cluster as {@code deploy/} ships it — the CRDs, and the
 * controller's namespace, ServiceAccount and RBAC from {@code deploy/controller.yaml} (all but its
 * Deployment) — plus what an operator adds: the credentials Secret, a node class {@code default}
 * pointing at the API and at this control plane's join endpoint, and a NodePool {@code default}.
 * The controller runs in this JVM as its ServiceAccount (the token's rights only, not an admin's).
 * {@link #close()} stops it and removes every WarmMetal and test object from the cluster, so the
 * next test finds it as new.
 */
public final class Installation implements AutoCloseable {
  /**
   * The repository's deploy/, from the e2e module (Maven's test working directory) or the root
   * (exec:java).
   */
  static final Path DEPLOY =
      Files.isDirectory(Path.of("..", "deploy")) ? Path.of("..", "deploy") : Path.of("deploy");

  public static final String NAMESPACE = "warmmetal-system";

  public final ControlPlane cluster;
  final KubernetesClient admin;
  private final List<Controller> controllers = new ArrayList<>();
  private volatile CloudProvider cloudProvider;

  private Installation(ControlPlane cluster) {
    this.cluster = cluster;
    this.admin = cluster.admin();
  }

  /**
   * Installs WarmMetal for the API at {@code endpoint} with a {@code client} token; {@code pool}
   * adjusts the NodePool. The controller is not started: {@link #startController()}.
   */
  public static Installation install(
      ControlPlane cluster, String endpoint, String clientToken, Consumer<NodePool> pool)
      throws Exception {
    Installation in = new Installation(cluster);
    installInto(in.admin, endpoint, clientToken, cluster.endpoint(), cluster.caCertHash(), pool);
    return in;
  }

  /**
   * What {@link #install} puts in a cluster, put in any API server (fabric8's mock one, say): the
   * CRDs, deploy/controller.yaml's objects but its Deployment, the credentials Secret, the node
   * class (joining nodes to {@code joinEndpoint}) and the NodePool.
   */
  public static void installInto(
      KubernetesClient kube,
      String endpoint,
      String clientToken,
      String joinEndpoint,
      String caCertHash,
      Consumer<NodePool> pool)
      throws Exception {
    for (String crd :
        List.of(
            "karpenter.sh_nodepools.yaml",
            "karpenter.sh_nodeclaims.yaml",
            "karpenter.sh_nodeoverlays.yaml",
            "warmmetalnodeclasses.warmmetal.io-v1.yml",
            "autoscaling.x-k8s.io_capacitybuffers.yaml")) {
      apply(kube, DEPLOY.resolve("crds").resolve(crd));
    }
    apply(kube, DEPLOY.resolve("controller.yaml"));
    Await.until(
        "the CRDs served",
        () -> {
          try {
            kube.resources(NodePool.class).list();
            kube.resources(NodeClaim.class).list();
            kube.resources(WarmMetalNodeClass.class).list();
            kube.resources(CapacityBuffer.class).inAnyNamespace().list();
            return true;
          } catch (KubernetesClientException notYet) {
            return false;
          }
        });
    installFleet(kube, endpoint, clientToken, joinEndpoint, caCertHash, pool);
  }

  /**
   * The objects that point a controller at a fleet, in a cluster that has WarmMetal's CRDs and
   * namespace (from deploy/, or the chart): the API's credentials Secret, the node class (joining
   * nodes to {@code joinEndpoint}) and the NodePool, which {@code pool} adjusts.
   */
  public static void installFleet(
      KubernetesClient kube,
      String endpoint,
      String clientToken,
      String joinEndpoint,
      String caCertHash,
      Consumer<NodePool> pool) {
    kube.secrets()
        .inNamespace(NAMESPACE)
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("warmmetal-credentials")
                .withNamespace(NAMESPACE)
                .endMetadata()
                .withStringData(Map.of("token", clientToken))
                .build())
        .createOr(NonDeletingOperation::update);
    WarmMetalNodeClass nodeClass = new WarmMetalNodeClass();
    nodeClass.getMetadata().setName("default");
    nodeClass.getSpec().endpoint = endpoint;
    nodeClass.getSpec().credentialsSecretRef = new WarmMetalNodeClass.SecretKeyRef();
    nodeClass.getSpec().credentialsSecretRef.name = "warmmetal-credentials";
    nodeClass.getSpec().credentialsSecretRef.namespace = NAMESPACE;
    nodeClass.getSpec().join.apiServer = joinEndpoint;
    nodeClass.getSpec().join.caCertHash = caCertHash;
    kube.resources(WarmMetalNodeClass.class).resource(nodeClass).create();
    NodePool nodePool = new NodePool();
    nodePool.getMetadata().setName("default");
    nodePool.getSpec().template.metadata.labels = Map.of("team", "ml");
    nodePool.getSpec().template.spec.nodeClassRef = new NodeClassReference();
    nodePool.getSpec().template.spec.nodeClassRef.group = "warmmetal.io";
    nodePool.getSpec().template.spec.nodeClassRef.kind = "WarmMetalNodeClass";
    nodePool.getSpec().template.spec.nodeClassRef.name = "default";
    pool.accept(nodePool);
    kube.resources(NodePool.class).resource(nodePool).create();
  }

  /**
   * Removes what {@link #installInto} applied from deploy/controller.yaml but its Namespace (the
   * ServiceAccount, roles and bindings), so a Helm release can own them: Helm refuses objects it
   * did not make. The CRDs stay (Helm leaves existing ones alone).
   */
  public static void removeManifests(KubernetesClient kube) throws Exception {
    try (InputStream in = Files.newInputStream(DEPLOY.resolve("controller.yaml"))) {
      for (HasMetadata item : kube.load(in).items()) {
        if (!(item instanceof Namespace)) {
          kube.resource(item).delete();
        }
      }
    }
  }

  /** Every object of a manifest but Deployments (the controller runs here, not in a pod). */
  private static void apply(KubernetesClient kube, Path manifest) throws Exception {
    try (InputStream in = Files.newInputStream(manifest)) {
      for (HasMetadata item : kube.load(in).items()) {
        if (!(item instanceof Deployment)) {
          kube.resource(item).createOr(NonDeletingOperation::update);
        }
      }
    }
  }

  /** The controller's ServiceAccount token, as the token controller issued it. */
  public String controllerToken() throws InterruptedException {
    String[] secret = new String[1];
    Await.until(
        "the controller's ServiceAccount token",
        () -> {
          ServiceAccount sa =
              admin.serviceAccounts().inNamespace(NAMESPACE).withName("warmmetal-controller").get();
          if (sa == null || sa.getSecrets() == null || sa.getSecrets().isEmpty()) {
            return false;
          }
          secret[0] = sa.getSecrets().get(0).getName();
          return true;
        });
    Secret token = admin.secrets().inNamespace(NAMESPACE).withName(secret[0]).get();
    return new String(
        Base64.getDecoder().decode(token.getData().get("token")), StandardCharsets.UTF_8);
  }

  /**
   * A controller as deploy/controller.yaml runs it: its ServiceAccount's token, the shipped
   * batching settings.
   */
  public Controller startController() throws InterruptedException {
    return startController(new KarpenterMetrics());
  }

  /** As {@link #startController()}, counting into {@code metrics}. */
  public Controller startController(KarpenterMetrics metrics) throws InterruptedException {
    return startController(metrics, true);
  }

  /**
   * How long a standby node may be NotReady before it is replaced: shorter than the shipped two
   * minutes, so a scenario sees it happen.
   */
  public static final Duration STANDBY_UNHEALTHY_AFTER = Duration.ofSeconds(20);

  /** As {@link #startController(KarpenterMetrics)}, touching pending pods or not. */
  public Controller startController(KarpenterMetrics metrics, boolean nudgePods)
      throws InterruptedException {
    KubernetesClient client = cluster.clientWithToken(controllerToken(), Controller.USER_AGENT);
    // The settings deploy/controller.yaml gives it (WARMMETAL_CONTROLLER_*), but the DaemonSet
    // overhead: these clusters run no DaemonSets, and the scenarios' arithmetic counts 100m and
    // 256 MiB.
    Controller.Settings settings =
        new Controller.Settings(
            Duration.ofMillis(5),
            Duration.ofMillis(100),
            Resources.of(100, 256L << 20),
            32,
            nudgePods,
            STANDBY_UNHEALTHY_AFTER);
    // The cloud provider it would make itself, kept: a test can wait for it to have read a shape.
    Controller controller =
        new Controller(
            client,
            settings,
            metrics,
            Clock.systemUTC(),
            (defs, onChange) -> {
              WarmMetalCloudProvider provider =
                  new WarmMetalCloudProvider(client, defs, settings.shapesRefresh(), onChange);
              cloudProvider = provider;
              return provider;
            });
    controller.start();
    controllers.add(controller);
    return controller;
  }

  /**
   * Whether the controller started last has read {@code shape} as one a launch of the node class
   * {@code default} can have now. Its catalog is read in the background (every second, {@link
   * Controller.Settings#SHAPES_REFRESH}): a machine just registered is not planned for until this
   * holds.
   */
  public boolean offers(String shape) {
    WarmMetalNodeClass nodeClass =
        admin.resources(WarmMetalNodeClass.class).withName("default").get();
    try {
      return cloudProvider.instanceTypes(nodeClass).available().contains(shape);
    } catch (CloudProviderException notReadYet) {
      return false;
    }
  }

  /**
   * Changes the node class {@code default}: a read-modify-write, again while the API server answers
   * 409 Conflict (the controller writes its status).
   */
  public void updateNodeClass(Consumer<WarmMetalNodeClass> change) {
    for (int attempt = 1; ; attempt++) {
      try {
        admin
            .resources(WarmMetalNodeClass.class)
            .withName("default")
            .edit(
                c -> {
                  change.accept(c);
                  return c;
                });
        return;
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409 || attempt == 10) {
          throw e;
        }
      }
    }
  }

  /**
   * Stops the controllers, then removes what WarmMetal and the test made (finalizers first, or
   * nothing goes).
   */
  @Override
  public void close() {
    controllers.forEach(Controller::close);
    controllers.clear();
    Cleaner.clean(admin);
  }
}
