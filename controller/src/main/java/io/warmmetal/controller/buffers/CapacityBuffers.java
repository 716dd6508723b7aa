package io.warmmetal.controller.buffers;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplate;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.warmmetal.controller.events.Event;
import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.scheduling.PodRequest;
import io.warmmetal.controller.scheduling.Scheduler;
import io.warmmetal.controller.state.PodRequests;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The CapacityBuffer controller, as upstream's: each pass, every buffer of the active-capacity
 * strategy is validated ({@link BufferValidation}), resolved to one chunk's pod template ({@link
 * BufferResolver}) and sized ({@link BufferReplicas}), which makes its virtual pods ({@link
 * VirtualPods}) for provisioning and disruption to plan with; after provisioning, how they fared
 * gives its {@code Provisioning} condition ({@link BufferProvisioning}). Its status — {@code
 * podTemplateRef}, {@code replicas}, {@code podTemplateGeneration}, {@code provisioningStrategy},
 * the {@code ReadyForProvisioning} and {@code Provisioning} conditions — is written as a merge
 * patch of the status subresource (as upstream's, with the resourceVersion as its lock), only when
 * it changed; a buffer that is not ready also gets a Warning event saying why, and no virtual pods.
 * A buffer of any other strategy is left alone, status and all (upstream: a strategy an autoscaler
 * does not know is someone else's).
 */
public final class CapacityBuffers {
  private static final Logger LOG = LoggerFactory.getLogger(CapacityBuffers.class);

  /**
   * How long a workload's template and replicas are trusted before they are read again (a changed
   * buffer is read at once; a PodTemplate comes from its informer every pass).
   */
  static final Duration RESOLVE_EVERY = Duration.ofSeconds(5);

  private final KubernetesClient kube;
  private final Supplier<List<CapacityBuffer>> buffers;
  private final BufferResolver resolver;
  private final Recorder events;

  /** Each active buffer as this pass resolved it, by {@code namespace/name}. */
  private final Map<String, Entry> entries = new LinkedHashMap<>();

  /** Where this pass's plan put each buffer's virtual pods (none until provisioning planned). */
  private Map<String, BufferProvisioning.Counts> placed = Map.of();

  /** A scalable's resolution, kept for {@link #RESOLVE_EVERY}. */
  private record Cached(
      Long generation, Instant at, BufferResolution resolution, String reason, String message) {}

  private final Map<String, Cached> cache = new HashMap<>();

  /** A buffer, the status it should have, and its virtual pods. */
  private record Entry(
      CapacityBuffer buffer, CapacityBuffer.Status status, boolean ready, List<Pod> pods) {
    boolean preJoined() {
      return preJoinedStrategy(buffer);
    }
  }

  /**
   * @param buffers the CapacityBuffers (the informer's)
   * @param templates the PodTemplate of a namespace and name (the informer's), null if none
   */
  public CapacityBuffers(
      KubernetesClient kube,
      Supplier<List<CapacityBuffer>> buffers,
      BiFunction<String, String, PodTemplate> templates,
      Recorder events) {
    this.kube = kube;
    this.buffers = buffers;
    this.resolver = new BufferResolver(kube, templates);
    this.events = events;
  }

  /** Whether this controller acts on the buffer: the active-capacity strategy (the default). */
  static boolean active(CapacityBuffer buffer) {
    String strategy = buffer.getSpec() == null ? null : buffer.getSpec().provisioningStrategy;
    return strategy == null
        || strategy.isEmpty()
        || strategy.equals(CapacityBuffer.ACTIVE_CAPACITY);
  }

  /**
   * Whether the buffer asks for WarmMetal's pre-joined standby: its room kept as standby nodes
   * joined ahead of time (the node classes' pre-joined standby), which a NodeClaim takes when a
   * real pod needs it.
   */
  static boolean preJoinedStrategy(CapacityBuffer buffer) {
    return buffer.getSpec() != null
        && CapacityBuffer.PRE_JOINED.equals(buffer.getSpec().provisioningStrategy);
  }

  /** Resolves every buffer of ours (either strategy): its status to be, its virtual pods. */
  public void reconcile() {
    placed = Map.of();
    Map<String, Entry> now = new LinkedHashMap<>();
    for (CapacityBuffer buffer : buffers.get()) {
      if (!(active(buffer) || preJoinedStrategy(buffer))
          || buffer.getMetadata().getDeletionTimestamp() != null) {
        continue;
      }
      now.put(buffer.key(), resolve(buffer));
    }
    entries.clear();
    entries.putAll(now);
    cache.keySet().retainAll(now.keySet());
  }

  /** The pods with every active buffer's virtual pods added: what provisioning plans for. */
  public List<Pod> withVirtualPods(List<Pod> pods) {
    List<Pod> all = new ArrayList<>(pods);
    entries.values().stream().filter(e -> !e.preJoined()).forEach(e -> all.addAll(e.pods()));
    return all;
  }

  /** The pre-joined buffers' virtual pods: what the standby nodes are planned for. */
  public List<Pod> preJoinedPods() {
    List<Pod> all = new ArrayList<>();
    entries.values().stream().filter(Entry::preJoined).forEach(e -> all.addAll(e.pods()));
    return all;
  }

  /** Provisioning planned: where the virtual pods went says each buffer's Provisioning. */
  public void planned(Map<PodRequest, Pod> pending, Scheduler.Plan plan) {
    Map<String, BufferProvisioning.Counts> merged = new HashMap<>(placed);
    merged.putAll(BufferProvisioning.classify(pending, plan));
    placed = merged;
  }

  /** Writes what changed of each active buffer's status. */
  public void writeStatus() {
    for (Entry e : entries.values()) {
      CapacityBuffer.Status status = e.status();
      int replicas = status.replicas == null ? 0 : status.replicas;
      BufferProvisioning.Outcome outcome =
          e.preJoined()
              ? BufferProvisioning.preJoined(e.ready(), replicas, placed.get(e.buffer().key()))
              : BufferProvisioning.condition(e.ready(), replicas, placed.get(e.buffer().key()));
      if (outcome != null) {
        set(
            status,
            e.buffer(),
            CapacityBuffer.PROVISIONING,
            outcome.status(),
            outcome.reason(),
            outcome.message());
      }
      if (!e.ready()) {
        Condition why = Conditions.get(status.conditions, CapacityBuffer.READY_FOR_PROVISIONING);
        events.publish(
            new Event(
                e.buffer(),
                Event.WARNING,
                why.getReason(),
                why.getMessage(),
                List.of(uid(e.buffer()), why.getMessage()),
                Event.DEFAULT_DEDUPE));
      }
      if (!Serialization.asJson(status).equals(Serialization.asJson(current(e.buffer())))) {
        write(e.buffer(), status);
      }
    }
    placed = Map.of();
  }

  private Entry resolve(CapacityBuffer buffer) {
    CapacityBuffer.Status status = Serialization.clone(current(buffer));
    List<String> problems = BufferValidation.problems(buffer.getSpec());
    String strategy = buffer.getSpec() == null ? null : buffer.getSpec().provisioningStrategy;
    status.provisioningStrategy =
        strategy == null || strategy.isEmpty() ? CapacityBuffer.ACTIVE_CAPACITY : strategy;
    if (!problems.isEmpty()) {
      notReady(buffer, status, BufferResolver.RESOLUTION_FAILED, String.join("; ", problems));
      return new Entry(buffer, status, false, List.of());
    }
    Cached resolved = resolution(buffer);
    if (resolved.resolution() == null) {
      notReady(buffer, status, resolved.reason(), resolved.message());
      return new Entry(buffer, status, false, List.of());
    }
    BufferResolution r = resolved.resolution();
    PodRequest chunk = PodRequests.of(VirtualPods.chunk(buffer, r.template()));
    int replicas = BufferReplicas.of(buffer.getSpec(), chunk.requests(), r.scalableReplicas());
    status.podTemplateRef =
        r.podTemplateName() == null ? null : new CapacityBuffer.LocalObjectRef(r.podTemplateName());
    status.podTemplateGeneration = r.podTemplateGeneration();
    if (!Objects.equals(status.replicas, replicas)) {
      LOG.info("CapacityBuffer {}: {} replica(s)", buffer.key(), replicas);
    }
    status.replicas = replicas;
    set(
        status,
        buffer,
        CapacityBuffer.READY_FOR_PROVISIONING,
        true,
        BufferResolver.RESOLVED,
        "Pod template resolved successfully");
    return new Entry(buffer, status, true, VirtualPods.of(buffer, r.template(), replicas));
  }

  /** The buffer resolved now, or as it was less than {@link #RESOLVE_EVERY} ago (workloads). */
  private Cached resolution(CapacityBuffer buffer) {
    Long generation = buffer.getMetadata().getGeneration();
    Instant now = Instant.now();
    Cached cached = cache.get(buffer.key());
    if (buffer.getSpec().podTemplateRef == null
        && cached != null
        && Objects.equals(cached.generation(), generation)
        && cached.at().plus(RESOLVE_EVERY).isAfter(now)) {
      return cached;
    }
    Cached fresh;
    try {
      fresh = new Cached(generation, now, resolver.resolve(buffer), null, null);
    } catch (BufferResolver.Failure f) {
      fresh = new Cached(generation, now, null, f.reason, f.getMessage());
    }
    cache.put(buffer.key(), fresh);
    return fresh;
  }

  private static void notReady(
      CapacityBuffer buffer, CapacityBuffer.Status status, String reason, String message) {
    Condition before = Conditions.get(status.conditions, CapacityBuffer.READY_FOR_PROVISIONING);
    if (before == null || !message.equals(before.getMessage())) {
      LOG.info("CapacityBuffer {} not ready for provisioning: {}", buffer.key(), message);
    }
    set(status, buffer, CapacityBuffer.READY_FOR_PROVISIONING, false, reason, message);
  }

  /** Sets a condition as upstream's {@code SetCondition}: with the buffer's generation. */
  private static void set(
      CapacityBuffer.Status status,
      CapacityBuffer buffer,
      String type,
      boolean value,
      String reason,
      String message) {
    Conditions.set(status.conditions, type, value, reason, message);
    Conditions.get(status.conditions, type)
        .setObservedGeneration(buffer.getMetadata().getGeneration());
  }

  private static CapacityBuffer.Status current(CapacityBuffer buffer) {
    return buffer.getStatus() == null ? new CapacityBuffer.Status() : buffer.getStatus();
  }

  /**
   * A JSON patch of the status subresource that puts the whole status (a field it no longer has
   * goes). This controller is the buffers' one status writer, so no lock: a status worked out from
   * a buffer changed meanwhile is worked out again next pass.
   */
  private void write(CapacityBuffer buffer, CapacityBuffer.Status status) {
    try {
      kube.resources(CapacityBuffer.class)
          .inNamespace(buffer.getMetadata().getNamespace())
          .withName(buffer.getMetadata().getName())
          .subresource("status")
          .patch(
              PatchContext.of(PatchType.JSON),
              "[{\"op\":\"add\",\"path\":\"/status\",\"value\":"
                  + Serialization.asJson(status)
                  + "}]");
    } catch (KubernetesClientException e) {
      LOG.warn(
          "CapacityBuffer {}: status not written ({}); next pass", buffer.key(), e.getMessage());
    }
  }

  private static String uid(CapacityBuffer buffer) {
    return buffer.getMetadata().getUid() == null ? buffer.key() : buffer.getMetadata().getUid();
  }
}
