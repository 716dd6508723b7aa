package io.warmmetal.controller.buffers;

import io.fabric8.kubernetes.api.model.Pod;
import io.warmmetal.controller.karpenter.VirtualPod;
import io.warmmetal.controller.scheduling.PodRequest;
import io.warmmetal.controller.scheduling.Scheduler;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Where each buffer's virtual pods went in a provisioning plan — onto capacity there is (nodes up
 * or on their way), onto new NodeClaims, or nowhere — and the {@code Provisioning} condition that
 * makes, with upstream's reasons and messages.
 */
final class BufferProvisioning {
  static final String FITS_EXISTING_CAPACITY = "FitsExistingCapacity";
  static final String REQUIRES_NEW_CAPACITY = "RequiresNewCapacity";
  static final String NOT_READY_FOR_PROVISIONING = "NotReadyForProvisioning";
  static final String BUFFER_EMPTY = "BufferEmpty";

  /** One buffer's virtual pods in a plan. */
  static final class Counts {
    int existing;
    int requiresNewClaim;
    int failed;
  }

  private BufferProvisioning() {}

  /** Per buffer ({@code namespace/name}), where its virtual pods went. */
  static Map<String, Counts> classify(Map<PodRequest, Pod> pending, Scheduler.Plan plan) {
    Set<PodRequest> onNew = Collections.newSetFromMap(new IdentityHashMap<>());
    plan.nodes().forEach(n -> onNew.addAll(n.pods()));
    Set<PodRequest> nowhere = Collections.newSetFromMap(new IdentityHashMap<>());
    nowhere.addAll(plan.unschedulable());
    Map<String, Counts> counts = new HashMap<>();
    pending.forEach(
        (request, pod) -> {
          String buffer = VirtualPod.buffer(pod);
          if (buffer == null) {
            return;
          }
          Counts c = counts.computeIfAbsent(buffer, b -> new Counts());
          if (plan.onExisting().containsKey(request)) {
            c.existing++;
          } else if (onNew.contains(request)) {
            c.requiresNewClaim++;
          } else if (nowhere.contains(request)) {
            c.failed++;
          }
        });
    return counts;
  }

  /** WarmMetal's reason: the buffer's room is kept as pre-joined standby nodes. */
  static final String PRE_JOINED_STANDBY = "PreJoinedStandby";

  /** A condition to set: its status, reason and message. */
  record Outcome(boolean status, String reason, String message) {}

  /**
   * The {@code Provisioning} condition for a buffer, as upstream's provisioner computes it; null to
   * leave it as it is (no plan placed its virtual pods this pass).
   */
  static Outcome condition(boolean ready, int replicas, Counts counts) {
    if (!ready) {
      return new Outcome(false, NOT_READY_FOR_PROVISIONING, "Buffer is not ReadyForProvisioning");
    }
    if (replicas == 0) {
      return new Outcome(false, BUFFER_EMPTY, "Buffer has zero desired replicas");
    }
    if (counts == null) {
      return null;
    }
    if (counts.requiresNewClaim > 0 || counts.failed > 0) {
      return new Outcome(
          false,
          REQUIRES_NEW_CAPACITY,
          counts.requiresNewClaim
              + "/"
              + replicas
              + " virtual pods required new capacity, "
              + counts.failed
              + " failed");
    }
    if (counts.existing == replicas) {
      return new Outcome(
          true,
          FITS_EXISTING_CAPACITY,
          "All " + replicas + " virtual pods fit on existing capacity");
    }
    return null;
  }

  /**
   * The {@code Provisioning} condition for a buffer of the pre-joined strategy: its virtual pods
   * planned onto new nodes, which the node classes keep as pre-joined standby nodes (their status
   * says how many are joined).
   */
  static Outcome preJoined(boolean ready, int replicas, Counts counts) {
    if (!ready || replicas == 0 || counts == null) {
      return condition(ready, replicas, counts);
    }
    if (counts.failed > 0) {
      return new Outcome(
          false,
          REQUIRES_NEW_CAPACITY,
          counts.failed + "/" + replicas + " virtual pods fit no NodePool's instance types");
    }
    return new Outcome(
        true,
        PRE_JOINED_STANDBY,
        "All "
            + replicas
            + " virtual pods planned onto pre-joined standby nodes (the node class's"
            + " status.preJoined counts them)");
  }
}
