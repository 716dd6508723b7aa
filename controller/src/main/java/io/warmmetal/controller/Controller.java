package io.warmmetal.controller;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.warmmetal.controller.buffers.BufferInformers;
import io.warmmetal.controller.buffers.CapacityBuffers;
import io.warmmetal.controller.disruption.Disruption;
import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.instances.InstancesApi;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.metrics.KarpenterMetrics;
import io.warmmetal.controller.nodeclass.NodeClassReadiness;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.pools.NodePoolStatus;
import io.warmmetal.controller.pools.RegistrationHealth;
import io.warmmetal.controller.provisioning.Provisioner;
import io.warmmetal.controller.provisioning.StaticPools;
import io.warmmetal.controller.registration.Registration;
import io.warmmetal.controller.scheduling.Resources;
import io.warmmetal.controller.scheduling.Scheduler;
import io.warmmetal.controller.standby.PreJoinedStandby;
import io.warmmetal.controller.state.Definitions;
import io.warmmetal.controller.termination.DisruptionBudgets;
import io.warmmetal.controller.termination.Orphans;
import io.warmmetal.controller.termination.Termination;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The controller: informers on Pods, Nodes, NodeClaims, PodDisruptionBudgets, CapacityBuffers and
 * PodTemplates wake one reconcile thread (so one pass at a time) once events have paused for the
 * batch idle time or the batch max time has passed since the first — as Karpenter's batching, but
 * milliseconds where Karpenter waits 1 s idle / 10 s max, since a launch here takes milliseconds —
 * and each pass provisions (pending pods and CapacityBuffers' virtual pods → NodeClaims →
 * launches), registers (NodeClaims ↔ Nodes), disrupts (expired, empty and underutilized nodes) and
 * terminates (drains deleted NodeClaims' Nodes).
 */
public final class Controller implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Controller.class);

  /**
   * How the controller's requests name themselves to the API server (audit logs; the RBAC test).
   */
  public static final String USER_AGENT = "warmmetal-controller/0.1.0";

  /**
   * @param batchIdle how long events must pause before a pass
   * @param batchMax the longest a pass waits after the first event
   * @param reserve what every node gives up besides the DaemonSets that land on it
   * @param launchParallelism how many NodeClaims are created and launched at once
   * @param nudgePods whether pending pods are touched when the node planned for them is
   *     initialized, so kube-scheduler tries them at once rather than after its backoff
   * @param standbyUnhealthyAfter how long a pre-joined standby node may be NotReady (or missing)
   *     before its machine is reset and another joined
   */
  public record Settings(
      Duration batchIdle,
      Duration batchMax,
      Resources reserve,
      int launchParallelism,
      boolean nudgePods,
      Duration standbyUnhealthyAfter) {}

  private final KubernetesClient kube;
  private final Settings settings;
  private volatile long firstEvent;
  private volatile long lastEvent;
  private final ScheduledExecutorService queue =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "warmmetal-reconcile");
            t.setDaemon(true);
            return t;
          });
  private final AtomicBoolean scheduled = new AtomicBoolean();

  /**
   * Passes run to the end: what a test counts to know the passes that would have acted have run.
   */
  private final AtomicLong passes = new AtomicLong();

  private static final Duration CREDENTIALS_TTL = Duration.ofSeconds(30);
  private final Map<String, InstancesApi> apis = new ConcurrentHashMap<>();
  private final Map<String, Credentials> credentials = new ConcurrentHashMap<>();
  private final Recorder events;
  private final Provisioner provisioner;
  private final Registration registration;
  private final Disruption disruption;
  private final StaticPools staticPools;
  private final Termination termination;
  private final Orphans orphans;
  private final NodeClassReadiness nodeClassReadiness;
  private final NodePoolStatus nodePoolStatus;
  private final PreJoinedStandby standby;
  private final CapacityBuffers buffers;
  private BufferInformers bufferInformers;
  private SharedIndexInformer<Pod> pods;
  private DisruptionBudgets pdbs;
  private final SharedIndexInformer<NodePool> poolInformer;
  private final SharedIndexInformer<WarmMetalNodeClass> classInformer;
  private SharedIndexInformer<Node> nodes;
  private SharedIndexInformer<DaemonSet> daemonSetInformer;
  private SharedIndexInformer<NodeClaim> claims;

  public Controller(KubernetesClient kube, Settings settings) {
    this(kube, settings, new KarpenterMetrics());
  }

  /**
   * @param metrics where the controller counts (they outlive a leadership: one per process)
   */
  public Controller(KubernetesClient kube, Settings settings, KarpenterMetrics metrics) {
    this.kube = kube;
    this.events = new Recorder(kube);
    this.settings = settings;
    Scheduler scheduler = new Scheduler(settings.reserve());
    this.poolInformer = kube.resources(NodePool.class).runnableInformer(0);
    this.classInformer = kube.resources(WarmMetalNodeClass.class).runnableInformer(0);
    Definitions defs = new Definitions(poolInformer.getStore(), classInformer.getStore());
    RegistrationHealth health = new RegistrationHealth();
    this.standby = new PreJoinedStandby(kube, this::api, events, settings.standbyUnhealthyAfter());
    this.provisioner =
        new Provisioner(
            kube,
            defs,
            this::api,
            scheduler,
            this::daemonSets,
            () -> nodes == null ? List.of() : nodes.getStore().list(),
            settings.launchParallelism(),
            settings.nudgePods(),
            standby::wake,
            events,
            metrics,
            health);
    this.registration = new Registration(kube, defs, metrics, health);
    this.staticPools = new StaticPools(kube, defs, scheduler, provisioner);
    this.disruption = new Disruption(kube, defs, scheduler, provisioner, events, metrics);
    this.termination = new Termination(kube, defs, this::api, events, metrics);
    this.nodeClassReadiness = new NodeClassReadiness(kube, this::api, standby::status);
    this.nodePoolStatus = new NodePoolStatus(kube, defs, metrics, health);
    this.orphans = new Orphans(this::api, Orphans.GRACE, Orphans.EVERY);
    this.buffers =
        new CapacityBuffers(
            kube,
            () -> bufferInformers == null ? List.of() : bufferInformers.buffers(),
            (namespace, name) ->
                bufferInformers == null ? null : bufferInformers.template(namespace, name),
            events);
    provisioner.onPlan(buffers::planned);
  }

  public void start() {
    ResourceEventHandler<Object> wake =
        new ResourceEventHandler<>() {
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
    daemonSetInformer = kube.apps().daemonSets().inAnyNamespace().inform(cast(wake));
    claims = kube.resources(NodeClaim.class).inform(cast(wake));
    pdbs = DisruptionBudgets.inform(kube, wake);
    bufferInformers = BufferInformers.inform(kube, wake);
    poolInformer.addEventHandler(cast(wake));
    classInformer.addEventHandler(cast(wake));
    poolInformer.run();
    classInformer.run();
    queue.scheduleAtFixedRate(this::trigger, 5, 5, TimeUnit.SECONDS); // timeouts and missed events
    trigger();
  }

  @SuppressWarnings("unchecked")
  private static <T> ResourceEventHandler<T> cast(ResourceEventHandler<Object> handler) {
    return (ResourceEventHandler<T>) (ResourceEventHandler<?>) handler;
  }

  /** The DaemonSets as last seen: what they run on each node is planned in. */
  private List<DaemonSet> daemonSets() {
    return daemonSetInformer == null ? List.of() : daemonSetInformer.getStore().list();
  }

  /** A pass soon: events close together fold into one. */
  public void trigger() {
    long now = System.nanoTime();
    lastEvent = now;
    if (scheduled.compareAndSet(false, true)
        && !queue.isShutdown()) { // informers may still deliver after close
      firstEvent = now;
      try {
        queue.schedule(this::passWhenQuiet, settings.batchIdle().toNanos(), TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException closing) {
        // closed in between: no more passes
      }
    }
  }

  /**
   * Runs the pass once events have paused for the idle time, or the max time has passed since the
   * first.
   */
  private void passWhenQuiet() {
    long now = System.nanoTime();
    long quietAt = lastEvent + settings.batchIdle().toNanos();
    long deadline = firstEvent + settings.batchMax().toNanos();
    if (now < quietAt && now < deadline) {
      queue.schedule(this::passWhenQuiet, Math.min(quietAt, deadline) - now, TimeUnit.NANOSECONDS);
      return;
    }
    pass();
  }

  private void pass() {
    scheduled.set(false);
    long passStart = System.nanoTime();
    List<Pod> allPods = pods.getStore().list();
    // NodeClaims are listed from the API server, once per pass: a claim this controller created a
    // moment ago must
    // not be missed (an informer may not have it yet), or its pods would be planned twice.
    List<NodeClaim> listed;
    try {
      // Only ours: NodeClaims of another provider (Karpenter itself, side by side) are not this
      // controller's to touch.
      listed =
          kube.resources(NodeClaim.class).list().getItems().stream()
              .filter(
                  c ->
                      c.getSpec().nodeClassRef != null
                          && WarmMetalNodeClass.KIND.equals(c.getSpec().nodeClassRef.kind))
              .toList();
    } catch (Exception e) {
      LOG.warn("Listing NodeClaims failed: {}", e.getMessage());
      return;
    }
    LOG.debug("Pass: {} NodeClaims listed in {} ms", listed.size(), millisSince(passStart));
    // Registration first: it is cheap when there is nothing to do, and a Node that just arrived
    // should not wait
    // for a plan of pods that may well fit on it already.
    step("registration", () -> registration.reconcile(nodes.getStore().list(), listed));
    // CapacityBuffers' virtual pods are planned as pending pods: provisioning makes room for them,
    // disruption does not take the room away. Never created, never told of (see VirtualPod).
    step("capacity buffers", buffers::reconcile);
    List<Pod> withBuffers = buffers.withVirtualPods(allPods);
    step("provisioning", () -> provisioner.reconcile(withBuffers, listed));
    step(
        "pre-joined capacity buffers",
        () -> {
          Provisioner.FreshPlan planned = provisioner.planOnNewNodes(buffers.preJoinedPods());
          buffers.planned(planned.requests(), planned.plan());
          // Only a plan that placed every virtual pod sizes the standby: one made while a
          // NodePool's shapes could not be read would shrink it, and the next grow it again.
          if (planned.plan().unschedulable().isEmpty()) {
            standby.fromBuffers(provisioner.standbyFor(planned.plan()));
          }
        });
    step("capacity buffer status", buffers::writeStatus);
    step("static nodepools", () -> staticPools.reconcile(listed, allPods));
    step(
        "pre-joined standby",
        () -> standby.reconcile(classInformer.getStore().list(), nodes.getStore().list(), listed));
    step(
        "disruption",
        () -> disruption.reconcile(withBuffers, nodes.getStore().list(), listed, pdbs.list()));
    step(
        "termination",
        () -> termination.reconcile(listed, nodes.getStore().list(), allPods, pdbs.list()));
    step("garbage collection", () -> orphans.reconcile(listed, classInformer.getStore().list()));
    // Status last: it reports what this pass did, and a slow instances API delays no launch.
    step("node class status", () -> nodeClassReadiness.reconcile(classInformer.getStore().list()));
    step("nodepool status", () -> nodePoolStatus.reconcile(listed));
    passes.incrementAndGet();
    LOG.debug("Pass: done in {} ms", millisSince(passStart));
  }

  private static long millisSince(long nanos) {
    return (System.nanoTime() - nanos) / 1_000_000;
  }

  /**
   * Passes this controller has run to the end (one that could not list the NodeClaims is not
   * counted). Tests wait for a number of them — "three passes later, still no second node" — rather
   * than for seconds.
   */
  public long passesFinished() {
    return passes.get();
  }

  private interface Step {
    void run() throws Exception;
  }

  /** One part of a pass; its failure does not keep the others from running. */
  private static void step(String name, Step step) {
    long start = System.nanoTime();
    try {
      step.run();
    } catch (Exception e) {
      LOG.warn("Reconcile ({}) failed: {}", name, e.getMessage(), e);
    }
    // Where a pass's time goes (PodToNodeBenchmark reads these): each step's duration.
    LOG.debug("Step {}: {} ms", name, millisSince(start));
  }

  /**
   * The instances API a node class names, with the token from its Secret — read again at most every
   * {@link #CREDENTIALS_TTL}, so a rotated token is picked up without a Secret read on every
   * launch.
   */
  private InstancesApi api(WarmMetalNodeClass nodeClass) {
    var spec = nodeClass.getSpec();
    var ref = spec.credentialsSecretRef;
    String key = ref.key == null ? "token" : ref.key;
    String secretId = ref.namespace + "/" + ref.name + "#" + key;
    Credentials cached = credentials.get(secretId);
    if (cached == null || cached.readAt().plus(CREDENTIALS_TTL).isBefore(Instant.now())) {
      Secret secret = kube.secrets().inNamespace(ref.namespace).withName(ref.name).get();
      if (secret == null) {
        throw new IllegalStateException(
            "Secret " + ref.namespace + "/" + ref.name + " (credentials) does not exist");
      }
      String token =
          secret.getData() != null && secret.getData().containsKey(key)
              ? new String(
                      Base64.getDecoder().decode(secret.getData().get(key)), StandardCharsets.UTF_8)
                  .trim()
              : secret.getStringData() == null ? null : secret.getStringData().get(key);
      if (token == null) {
        throw new IllegalStateException(
            "Secret " + ref.namespace + "/" + ref.name + " has no key '" + key + "'");
      }
      cached = new Credentials(token, Instant.now());
      credentials.put(secretId, cached);
    }
    String token = cached.token();
    // One client per endpoint, replaced when its token rotates (not one more per token, kept
    // forever).
    return apis.compute(
        spec.endpoint,
        (endpoint, current) ->
            current != null && current.usesToken(token)
                ? current
                : new InstancesApi(URI.create(endpoint), token));
  }

  private record Credentials(String token, Instant readAt) {}

  @Override
  public void close() {
    queue.shutdownNow();
    try {
      // The pass under way finishes first: a controller closed mid-pass would otherwise still write
      // afterwards.
      queue.awaitTermination(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    provisioner.close();
    events.close();
    if (pods != null) {
      pods.close();
      nodes.close();
      daemonSetInformer.close();
      claims.close();
      pdbs.close();
      poolInformer.close();
      classInformer.close();
      bufferInformers.close();
    }
  }
}
