package io.warmmetal.controller;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.warmmetal.controller.buffers.BufferInformers;
import io.warmmetal.controller.buffers.CapacityBuffers;
import io.warmmetal.controller.claims.NodeClaimWriter;
import io.warmmetal.controller.claims.NodeClaims;
import io.warmmetal.controller.cloudprovider.CloudProvider;
import io.warmmetal.controller.disruption.Disruption;
import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.health.NodeHealth;
import io.warmmetal.controller.instances.NodeClassReadiness;
import io.warmmetal.controller.instances.WarmMetalCloudProvider;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodeOverlay;
import io.warmmetal.controller.karpenter.NodePool;
import io.warmmetal.controller.lifecycle.NodeClaimLifecycle;
import io.warmmetal.controller.metrics.KarpenterMetrics;
import io.warmmetal.controller.metrics.MeteredCloudProvider;
import io.warmmetal.controller.metrics.PodTimes;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.nodeoverlay.InstanceTypeStore;
import io.warmmetal.controller.nodeoverlay.NodeOverlays;
import io.warmmetal.controller.nodeoverlay.OverlaidCloudProvider;
import io.warmmetal.controller.pools.NodePoolStatus;
import io.warmmetal.controller.pools.RegistrationHealth;
import io.warmmetal.controller.provisioning.Launcher;
import io.warmmetal.controller.provisioning.Provisioner;
import io.warmmetal.controller.provisioning.StaticPools;
import io.warmmetal.controller.registration.Registration;
import io.warmmetal.controller.scheduling.Resources;
import io.warmmetal.controller.scheduling.Scheduler;
import io.warmmetal.controller.standby.PreJoinedStandby;
import io.warmmetal.controller.state.ClusterState;
import io.warmmetal.controller.state.Definitions;
import io.warmmetal.controller.state.VolumeInformers;
import io.warmmetal.controller.state.VolumeTopology;
import io.warmmetal.controller.state.VolumeUsage;
import io.warmmetal.controller.termination.DisruptionBudgets;
import io.warmmetal.controller.termination.NodeFinalizer;
import io.warmmetal.controller.termination.Orphans;
import io.warmmetal.controller.termination.Termination;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
 * PodTemplates wake the singleton pass (one at a time) once events have paused for the batch idle
 * time or the batch max time has passed since the first — as Karpenter's batching, but milliseconds
 * where Karpenter waits 1 s idle / 10 s max, since a launch here takes milliseconds — and each pass
 * provisions (pending pods and CapacityBuffers' virtual pods → NodeClaims), disrupts (expired,
 * empty and underutilized nodes) and terminates (drains deleted NodeClaims' Nodes). Each
 * NodeClaim's lifecycle (launch, registration, initialization, liveness) runs per claim, many at
 * once, woken by its own and its Node's events ({@link NodeClaimLifecycle}).
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
   * @param shapesRefresh how often each node class's shapes (instance types and their free
   *     machines) are read again in the background: plans read them from memory
   * @param minValuesBestEffort upstream's {@code --min-values-policy=BestEffort}
   * @param featureGates upstream's {@code --feature-gates}
   */
  public record Settings(
      Duration batchIdle,
      Duration batchMax,
      Resources reserve,
      int launchParallelism,
      boolean nudgePods,
      Duration standbyUnhealthyAfter,
      Duration shapesRefresh,
      boolean minValuesBestEffort,
      FeatureGates featureGates) {

    public Settings(
        Duration batchIdle,
        Duration batchMax,
        Resources reserve,
        int launchParallelism,
        boolean nudgePods,
        Duration standbyUnhealthyAfter,
        Duration shapesRefresh,
        boolean minValuesBestEffort) {
      this(
          batchIdle,
          batchMax,
          reserve,
          launchParallelism,
          nudgePods,
          standbyUnhealthyAfter,
          shapesRefresh,
          minValuesBestEffort,
          FeatureGates.DEFAULT);
    }

    /** These settings with other feature gates. */
    public Settings withFeatureGates(FeatureGates gates) {
      return new Settings(
          batchIdle,
          batchMax,
          reserve,
          launchParallelism,
          nudgePods,
          standbyUnhealthyAfter,
          shapesRefresh,
          minValuesBestEffort,
          gates);
    }

    /** How often each node class's shapes are read again, unless told: every second. */
    public static final Duration SHAPES_REFRESH = Duration.ofSeconds(1);

    public Settings(
        Duration batchIdle,
        Duration batchMax,
        Resources reserve,
        int launchParallelism,
        boolean nudgePods,
        Duration standbyUnhealthyAfter,
        Duration shapesRefresh) {
      this(
          batchIdle,
          batchMax,
          reserve,
          launchParallelism,
          nudgePods,
          standbyUnhealthyAfter,
          shapesRefresh,
          false);
    }

    public Settings(
        Duration batchIdle,
        Duration batchMax,
        Resources reserve,
        int launchParallelism,
        boolean nudgePods,
        Duration standbyUnhealthyAfter) {
      this(
          batchIdle,
          batchMax,
          reserve,
          launchParallelism,
          nudgePods,
          standbyUnhealthyAfter,
          SHAPES_REFRESH);
    }
  }

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

  /** How often NodePools' costs are worked out again. */
  private static final Duration COSTS_EVERY = Duration.ofSeconds(5);

  private long costsObservedAt;

  /**
   * Passes run to the end: what a test counts to know the passes that would have acted have run.
   */
  private final AtomicLong passes = new AtomicLong();

  private final MeteredCloudProvider cloud;
  private final KarpenterMetrics metrics;
  private final Clock clock;
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

  /** With the NodeOverlay feature gate only (else null): as upstream registers its controller. */
  private final NodeOverlays nodeOverlays;

  private final SharedIndexInformer<NodeOverlay> overlayInformer;
  private BufferInformers bufferInformers;
  private SharedIndexInformer<Pod> pods;
  private DisruptionBudgets pdbs;
  private VolumeInformers volumes;
  private VolumeTopology volumeTopology;
  private final SharedIndexInformer<NodePool> poolInformer;
  private final SharedIndexInformer<WarmMetalNodeClass> classInformer;
  private final SharedIndexInformer<Node> nodeInformer;
  private SharedIndexInformer<DaemonSet> daemonSetInformer;
  private final SharedIndexInformer<NodeClaim> claimInformer;
  private final NodeClaims nodeClaims;
  private final NodeClaimLifecycle lifecycle;
  private static final String BY_PROVIDER = "providerID";

  public Controller(KubernetesClient kube, Settings settings) {
    this(kube, settings, new KarpenterMetrics());
  }

  /**
   * @param metrics where the controller counts (they outlive a leadership: one per process)
   */
  public Controller(KubernetesClient kube, Settings settings, KarpenterMetrics metrics) {
    this(
        kube,
        settings,
        metrics,
        Clock.systemUTC(),
        (defs, onChange) ->
            new WarmMetalCloudProvider(kube, defs, settings.shapesRefresh(), onChange));
  }

  /** Makes the cloud provider, given the definitions and what to wake when its offer changes. */
  @FunctionalInterface
  public interface CloudProviders {
    CloudProvider create(Definitions defs, Runnable onInstanceTypesChanged);
  }

  /**
   * With the cloud provider and clock given: a test's fake ones, for a pass over a fixed state.
   *
   * @param metrics where the controller counts (they outlive a leadership: one per process)
   */
  public Controller(
      KubernetesClient kube,
      Settings settings,
      KarpenterMetrics metrics,
      Clock clock,
      CloudProviders cloudProviders) {
    this.kube = kube;
    this.events = new Recorder(kube);
    this.settings = settings;
    Scheduler scheduler = new Scheduler(settings.reserve(), settings.minValuesBestEffort());
    this.poolInformer = kube.resources(NodePool.class).runnableInformer(0);
    this.classInformer = kube.resources(WarmMetalNodeClass.class).runnableInformer(0);
    Definitions defs = new Definitions(poolInformer.getStore(), classInformer.getStore());
    RegistrationHealth health = new RegistrationHealth();
    this.metrics = metrics;
    this.clock = clock;
    this.cloud = new MeteredCloudProvider(cloudProviders.create(defs, this::trigger), metrics);
    this.standby = new PreJoinedStandby(kube, cloud, events, settings.standbyUnhealthyAfter());
    this.claimInformer = kube.resources(NodeClaim.class).runnableInformer(0);
    claimInformer.addIndexers(Map.of(BY_PROVIDER, Controller::claimProvider));
    this.nodeClaims = new NodeClaims(claimInformer.getStore(), clock);
    NodeClaimWriter writer = new NodeClaimWriter(kube, nodeClaims);
    Launcher launcher = new Launcher(writer, cloud, events, clock, standby::wake);
    this.registration = new Registration(kube, writer, defs, metrics, health);
    this.nodeInformer = kube.nodes().runnableInformer(0);
    nodeInformer.addIndexers(Map.of(BY_PROVIDER, Controller::nodeProvider));
    this.termination = new Termination(kube, writer, defs, cloud, events, metrics);
    // As upstream registers its node.health controller: behind the gate, if the provider has
    // policies.
    NodeHealth nodeHealth =
        settings.featureGates().nodeRepair() && !cloud.repairPolicies().isEmpty()
            ? new NodeHealth(
                cloud,
                writer,
                () -> nodeInformer.getStore().list(),
                name -> poolInformer.getStore().getByKey(name),
                events,
                metrics,
                clock)
            : null;
    this.lifecycle =
        new NodeClaimLifecycle(
            nodeClaims,
            writer,
            this::nodeByProvider,
            launcher,
            registration,
            claim ->
                termination.reconcile(
                    claim, nodeInformer.getStore().list(), pods.getStore().list(), pdbs.list()),
            nodeHealth,
            defs,
            health,
            events,
            clock,
            settings.launchParallelism(),
            (queue, took, result) -> metrics.reconciled(queue.replace('-', '.'), took, result));
    metrics.workQueue("nodeclaim.launch", lifecycle::launchDepth);
    metrics.workQueue("nodeclaim.lifecycle", lifecycle::lifecycleDepth);
    // Plans see NodePools' instance types as their NodeOverlays change them (upstream's decorator).
    CloudProvider planned = cloud;
    if (settings.featureGates().nodeOverlay()) {
      InstanceTypeStore store = new InstanceTypeStore();
      this.overlayInformer = kube.resources(NodeOverlay.class).runnableInformer(0);
      this.nodeOverlays =
          new NodeOverlays(
              kube,
              () -> overlayInformer.getStore().list(),
              defs::pools,
              pool -> cloud.instanceTypes(defs.nodeClassOf(pool)).types(),
              store);
      planned = new OverlaidCloudProvider(cloud, store);
    } else {
      this.overlayInformer = null;
      this.nodeOverlays = null;
    }
    this.provisioner =
        new Provisioner(
            kube,
            defs,
            planned,
            launcher,
            writer,
            lifecycle::changed,
            clock,
            scheduler,
            this::daemonSets,
            () -> nodeInformer.getStore().list(),
            settings.launchParallelism(),
            settings.nudgePods(),
            events,
            metrics,
            health);
    this.staticPools = new StaticPools(writer, defs, scheduler, provisioner);
    this.disruption =
        new Disruption(kube, writer, defs, scheduler, provisioner, events, metrics, clock);
    this.nodeClassReadiness = new NodeClassReadiness(kube, cloud, standby::status);
    this.nodePoolStatus = new NodePoolStatus(kube, defs, metrics, health);
    this.orphans = new Orphans(cloud, writer, clock, Orphans.GRACE, Orphans.EVERY);
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
    pods.addEventHandler(new PodTimes(metrics, clock));
    nodeInformer.addEventHandler(
        new ResourceEventHandler<>() {
          @Override
          public void onAdd(Node node) {
            nodeChanged(node);
          }

          @Override
          public void onUpdate(Node oldNode, Node node) {
            nodeChanged(node);
          }

          @Override
          public void onDelete(Node node, boolean deletedFinalStateUnknown) {
            nodeChanged(node);
          }
        });
    daemonSetInformer = kube.apps().daemonSets().inAnyNamespace().inform(cast(wake));
    claimInformer.addEventHandler(
        new ResourceEventHandler<>() {
          @Override
          public void onAdd(NodeClaim claim) {
            claimChanged(claim, false);
          }

          @Override
          public void onUpdate(NodeClaim oldClaim, NodeClaim claim) {
            claimChanged(claim, false);
          }

          @Override
          public void onDelete(NodeClaim claim, boolean deletedFinalStateUnknown) {
            claimChanged(claim, true);
          }
        });
    pdbs = DisruptionBudgets.inform(kube, wake);
    volumes = new VolumeInformers(kube, wake);
    volumeTopology = new VolumeTopology(volumes);
    provisioner.countVolumes(new VolumeUsage(volumes));
    bufferInformers = BufferInformers.inform(kube, wake);
    poolInformer.addEventHandler(cast(wake));
    classInformer.addEventHandler(cast(wake));
    if (overlayInformer != null) {
      overlayInformer.addEventHandler(cast(wake));
      overlayInformer.run();
    }
    poolInformer.run();
    classInformer.run();
    nodeInformer.run();
    claimInformer.run();
    queue.scheduleAtFixedRate(this::trigger, 5, 5, TimeUnit.SECONDS); // timeouts and missed events
    trigger();
  }

  @SuppressWarnings("unchecked")
  private static <T> ResourceEventHandler<T> cast(ResourceEventHandler<Object> handler) {
    return (ResourceEventHandler<T>) (ResourceEventHandler<?>) handler;
  }

  private void claimChanged(NodeClaim claim, boolean gone) {
    nodeClaims.seen(claim, gone);
    if (!gone && NodeClaims.ours(claim)) {
      lifecycle.changed(claim.getMetadata().getName());
    }
    trigger();
  }

  /** A Node's change is its claim's (found by provider ID), and may change plans. */
  private void nodeChanged(Node node) {
    String provider = nodeProvider(node).stream().findFirst().orElse(null);
    if (provider != null) {
      claimInformer
          .getIndexer()
          .byIndex(BY_PROVIDER, provider)
          .forEach(c -> lifecycle.changed(c.getMetadata().getName()));
    }
    trigger();
  }

  private Node nodeByProvider(String providerId) {
    List<Node> found = nodeInformer.getIndexer().byIndex(BY_PROVIDER, providerId);
    return found.isEmpty() ? null : found.get(0);
  }

  private static List<String> nodeProvider(Node node) {
    return node.getSpec() == null || node.getSpec().getProviderID() == null
        ? List.of()
        : List.of(node.getSpec().getProviderID());
  }

  private static List<String> claimProvider(NodeClaim claim) {
    return claim.getStatus() == null || claim.getStatus().providerID == null
        ? List.of()
        : List.of(claim.getStatus().providerID);
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
    // Pods as plans see them: each pinned where its volumes can be attached (upstream's
    // VolumeTopology).
    List<Pod> informed = pods.getStore().list();
    List<Pod> allPods = volumeTopology.inject(informed);
    // The informer's claims with this controller's own writes over them: a claim created a moment
    // ago is counted (its pods are not planned twice) though the informer may not have it yet.
    List<NodeClaim> listed = nodeClaims.list();
    LOG.debug("Pass: {} NodeClaims read in {} ms", listed.size(), millisSince(passStart));
    List<Node> nodes = nodeInformer.getStore().list();
    // Each claim's lifecycle runs on its own events; a pass looks at every claim not initialized
    // yet, or being deleted, too, so a missed event costs a pass, not a claim (the queue folds
    // repeats).
    listed.stream()
        .filter(
            c ->
                c.getMetadata().getDeletionTimestamp() != null
                    || c.getStatus() == null
                    || !Conditions.isTrue(c.getStatus().conditions, Conditions.INITIALIZED))
        .forEach(c -> lifecycle.changed(c.getMetadata().getName()));
    // CapacityBuffers' virtual pods are planned as pending pods: provisioning makes room for them,
    // disruption does not take the room away. Never created, never told of (see VirtualPod).
    if (nodeOverlays != null) {
      step(
          "node overlays",
          () -> {
            if (nodeOverlays.reconcile() == NodeOverlays.Outcome.AGAIN) {
              trigger();
            }
          });
    }
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
        () -> standby.reconcile(classInformer.getStore().list(), nodes, listed));
    step("disruption", () -> disruption.reconcile(withBuffers, nodes, listed, pdbs.list()));
    step("garbage collection", () -> orphans.reconcile(listed, classInformer.getStore().list()));
    step("node finalizers", () -> NodeFinalizer.releaseUnclaimed(kube, nodes, listed));
    // Status last: it reports what this pass did, and a slow instances API delays no launch.
    step("node class status", () -> nodeClassReadiness.reconcile(classInformer.getStore().list()));
    step("nodepool status", () -> nodePoolStatus.reconcile(listed));
    step("metrics", () -> metrics.observeCluster(nodes, informed));
    step("nodepool cost", () -> observeCosts(listed));
    passes.incrementAndGet();
    LOG.debug("Pass: done in {} ms", millisSince(passStart));
  }

  /**
   * What each NodePool's nodes cost ({@code karpenter_nodepools_cost_total}), worked out at most
   * every {@link #COSTS_EVERY}, as the cluster gauges are: a burst's passes do not each pay for it.
   */
  private void observeCosts(List<NodeClaim> listed) throws Exception {
    long now = System.nanoTime();
    if (costsObservedAt != 0 && now - costsObservedAt < COSTS_EVERY.toNanos()) {
      return;
    }
    costsObservedAt = now;
    ClusterState state = provisioner.state(listed, List.of());
    Map<String, Double> costs = new HashMap<>();
    state.pools.keySet().forEach(pool -> costs.put(pool, 0.0));
    costs.putAll(state.costByPool);
    metrics.nodePoolCosts(costs);
  }

  private static long millisSince(long nanos) {
    return (System.nanoTime() - nanos) / 1_000_000;
  }

  /**
   * Runs one pass now, on the pass thread, and returns when it is done: a test's step over a fixed
   * state.
   */
  public void passNow() throws Exception {
    queue.submit(this::pass).get();
  }

  /**
   * NodeClaim lifecycle reconciles finished so far: a test counts them to know its claims were
   * looked at again.
   */
  public long lifecycleReconciles() {
    return lifecycle.reconciled();
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

  /**
   * One part of a pass; its failure does not keep the others from running. Each is a controller as
   * controller-runtime's metrics count them ({@code controller_runtime_reconcile_*}).
   */
  private void step(String name, Step step) {
    long start = System.nanoTime();
    String result = "success";
    try {
      step.run();
    } catch (Exception e) {
      result = "error";
      LOG.warn("Reconcile ({}) failed: {}", name, e.getMessage(), e);
    }
    metrics.reconciled(
        name.replace(' ', '.').replace("-", ""),
        Duration.ofNanos(System.nanoTime() - start),
        result);
    // Where a pass's time goes (PodToNodeBenchmark reads these): each step's duration.
    LOG.debug("Step {}: {} ms", name, millisSince(start));
  }

  /** A pass after {@code delay}: something is to be tried again then. */
  private void triggerIn(Duration delay) {
    try {
      queue.schedule(this::trigger, delay.toNanos(), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException closing) {
      // closed: no more passes
    }
  }

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
    disruption.close();
    lifecycle.close();
    if (cloud.metered() instanceof AutoCloseable closeable) {
      try {
        closeable.close();
      } catch (Exception e) {
        LOG.debug("Closing the cloud provider: {}", e.getMessage());
      }
    }
    events.close();
    if (pods != null) {
      pods.close();
      daemonSetInformer.close();
      pdbs.close();
      volumes.close();
      poolInformer.close();
      classInformer.close();
      if (overlayInformer != null) {
        overlayInformer.close();
      }
      nodeInformer.close();
      claimInformer.close();
      bufferInformers.close();
    }
  }
}
