package io.warmmetal.controller;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.warmmetal.controller.disruption.Disruption;
import io.warmmetal.controller.instances.InstancesApi;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.provisioning.Provisioner;
import io.warmmetal.controller.registration.Registration;
import io.warmmetal.controller.scheduling.Resources;
import io.warmmetal.controller.scheduling.Scheduler;
import io.warmmetal.controller.termination.Termination;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The controller: informers on Pods, Nodes, NodeClaims and PodDisruptionBudgets wake one reconcile thread (so one
 * pass at a time) after a short batching window — far below Karpenter's 1 s idle / 10 s max, since a launch here
 * takes milliseconds — and each pass provisions (pending pods → NodeClaims → launches), registers (NodeClaims ↔
 * Nodes), disrupts (expired, empty and underutilized nodes) and terminates (drains deleted NodeClaims' Nodes).
 */
public final class Controller implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Controller.class);

  private final KubernetesClient kube;
  private final Duration batchWindow;
  private final ScheduledExecutorService queue = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "warmmetal-reconcile");
    t.setDaemon(true);
    return t;
  });
  private final AtomicBoolean scheduled = new AtomicBoolean();
  private final Map<String, InstancesApi> apis = new ConcurrentHashMap<>();
  private final Provisioner provisioner;
  private final Registration registration;
  private final Disruption disruption;
  private final Termination termination;
  private SharedIndexInformer<Pod> pods;
  private SharedIndexInformer<PodDisruptionBudget> pdbs;
  private SharedIndexInformer<Node> nodes;
  private SharedIndexInformer<NodeClaim> claims;

  public Controller(KubernetesClient kube, Duration batchWindow, Resources daemonSetOverhead) {
    this.kube = kube;
    this.batchWindow = batchWindow;
    Scheduler scheduler = new Scheduler(daemonSetOverhead, 110);
    this.provisioner = new Provisioner(kube, this::api, scheduler, daemonSetOverhead);
    this.registration = new Registration(kube);
    this.disruption = new Disruption(kube, this::api, scheduler, daemonSetOverhead);
    this.termination = new Termination(kube, this::api);
  }

  public void start() {
    ResourceEventHandler<Object> wake = new ResourceEventHandler<>() {
      @Override
      public void onAdd(Object obj) {
        trigger();
      }

      @Override
      public void onUpdate(Object oldObj, Object newObj) {
        trigger();
      }

      @Override
      public void onDelete(Object obj, boolean deletedFinalStateUnknown) {
        trigger();
      }
    };
    pods = kube.pods().inAnyNamespace().inform(cast(wake));
    nodes = kube.nodes().inform(cast(wake));
    claims = kube.resources(NodeClaim.class).inform(cast(wake));
    pdbs = kube.resources(PodDisruptionBudget.class).inAnyNamespace().inform(cast(wake));
    queue.scheduleAtFixedRate(this::trigger, 5, 5, TimeUnit.SECONDS); // timeouts and missed events
    trigger();
  }

  @SuppressWarnings("unchecked")
  private static <T> ResourceEventHandler<T> cast(ResourceEventHandler<Object> handler) {
    return (ResourceEventHandler<T>) (ResourceEventHandler<?>) handler;
  }

  /** A pass soon: events within the batching window fold into one. */
  public void trigger() {
    if (scheduled.compareAndSet(false, true)) {
      queue.schedule(this::pass, batchWindow.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  private void pass() {
    scheduled.set(false);
    List<Pod> allPods = pods.getStore().list();
    step("provisioning", () -> provisioner.reconcile(allPods));
    step("registration", () -> registration.reconcile(nodes.getStore().list()));
    step("disruption", () -> disruption.reconcile(allPods));
    step("termination", () -> termination.reconcile(kube.resources(NodeClaim.class).list().getItems(), allPods,
        pdbs.getStore().list()));
  }

  private interface Step {
    void run() throws Exception;
  }

  /** One part of a pass; its failure does not keep the others from running. */
  private static void step(String name, Step step) {
    try {
      step.run();
    } catch (Exception e) {
      LOG.warn("Reconcile ({}) failed: {}", name, e.getMessage(), e);
    }
  }

  /** The instances API a node class names, with the token from its Secret. */
  private InstancesApi api(WarmMetalNodeClass nodeClass) {
    var spec = nodeClass.getSpec();
    var ref = spec.credentialsSecretRef;
    Secret secret = kube.secrets().inNamespace(ref.namespace).withName(ref.name).get();
    if (secret == null) {
      throw new IllegalStateException("Secret " + ref.namespace + "/" + ref.name + " (credentials) does not exist");
    }
    String key = ref.key == null ? "token" : ref.key;
    String token = secret.getData() != null && secret.getData().containsKey(key)
        ? new String(Base64.getDecoder().decode(secret.getData().get(key)), StandardCharsets.UTF_8).trim()
        : secret.getStringData().get(key);
    return apis.computeIfAbsent(spec.endpoint + "#" + token, k -> new InstancesApi(URI.create(spec.endpoint), token));
  }

  @Override
  public void close() {
    queue.shutdownNow();
    if (pods != null) {
      pods.close();
      nodes.close();
      claims.close();
      pdbs.close();
    }
  }
}
