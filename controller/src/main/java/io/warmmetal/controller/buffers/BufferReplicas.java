package io.warmmetal.controller.buffers;

import io.fabric8.kubernetes.api.model.Quantity;
import io.warmmetal.controller.scheduling.Resources;
import io.warmmetal.controller.state.PodRequests;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Map;

/**
 * How many chunks a buffer asks for, as upstream computes it: {@code replicas} and {@code
 * percentage} (of the scalable's replicas) take the larger, {@code limits} cap that; with neither
 * of the first two, as many chunks as fit in the limits. A limit on a resource the chunk does not
 * request caps nothing.
 */
public final class BufferReplicas {
  private BufferReplicas() {}

  /**
   * @param chunk what one chunk requests
   * @param scalableReplicas the scalable's replicas (null for a PodTemplate buffer, where {@code
   *     percentage} means nothing)
   */
  public static int of(CapacityBuffer.Spec spec, Resources chunk, Integer scalableReplicas) {
    Integer desired = null;
    if (spec.percentage != null && scalableReplicas != null && scalableReplicas > 0) {
      desired = fromPercentage(spec.percentage, scalableReplicas);
    }
    if (spec.replicas != null) {
      desired = Math.max(desired == null ? 0 : desired, Math.max(0, spec.replicas));
    }
    Integer fit = spec.limits == null ? null : fitting(spec.limits, chunk);
    if (fit == null) {
      return desired == null ? 0 : desired;
    }
    return desired == null ? fit : Math.min(desired, fit);
  }

  /** {@code ceil(replicas × percentage / 100)}, at least 1 when both are positive. */
  static int fromPercentage(int percentage, int scalableReplicas) {
    if (percentage <= 0 || scalableReplicas <= 0) {
      return 0;
    }
    long product = (long) percentage * scalableReplicas;
    return (int) Math.max(1, Math.min(Integer.MAX_VALUE, (product + 99) / 100));
  }

  /**
   * How many chunks fit in the limits: the least, over the resources both name, of limit ÷ request
   * rounded down; null when they name none in common (the limits cap nothing).
   */
  static Integer fitting(Map<String, Quantity> limits, Resources chunk) {
    Integer least = null;
    for (Map.Entry<String, Quantity> limit : limits.entrySet()) {
      BigDecimal request = amount(chunk, limit.getKey());
      if (request == null || request.signum() <= 0) {
        continue;
      }
      BigDecimal allowed = Quantity.getAmountInBytes(limit.getValue());
      long n =
          Math.max(
              0,
              Math.min(
                  Integer.MAX_VALUE, allowed.divide(request, 0, RoundingMode.FLOOR).longValue()));
      least = least == null ? (int) n : Math.min(least, (int) n);
    }
    return least;
  }

  /** The chunk's request of a resource in the limit's units; null when it requests none. */
  private static BigDecimal amount(Resources chunk, String resource) {
    return switch (resource) {
      case "cpu" -> BigDecimal.valueOf(chunk.cpuMilli()).movePointLeft(3);
      case "memory" -> BigDecimal.valueOf(chunk.memoryBytes());
      case PodRequests.PODS -> null; // every pod counts one; upstream's requests have no such key
      default -> {
        Long units = chunk.extended().get(resource);
        yield units == null ? null : BigDecimal.valueOf(units);
      }
    };
  }
}
