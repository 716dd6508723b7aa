package io.warmmetal.controller;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Upstream's {@code --feature-gates} ({@code FEATURE_GATES}): {@code Name=bool} pairs, comma
 * separated, over upstream's defaults. Gates WarmMetal serves without a gate ({@code
 * ReservedCapacity}, {@code StaticCapacity}, {@code CapacityBuffer}) and one it has no use for
 * ({@code SpotToSpotConsolidation}: owned servers have no spot) are accepted and read, so
 * upstream's Helm values work unchanged.
 *
 * @param nodeRepair whether unhealthy nodes are replaced ({@code NodeRepair}, off by default)
 * @param nodeOverlay whether NodeOverlays change instance types' prices and capacity ({@code
 *     NodeOverlay}, off by default)
 */
public record FeatureGates(boolean nodeRepair, boolean nodeOverlay) {
  private static final Logger LOG = LoggerFactory.getLogger(FeatureGates.class);

  /** Upstream's defaults. */
  public static final FeatureGates DEFAULT = new FeatureGates(false, false);

  /** Upstream's gate names (v1.14), each with its default. */
  static final Map<String, Boolean> KNOWN = known();

  private static Map<String, Boolean> known() {
    Map<String, Boolean> gates = new LinkedHashMap<>();
    gates.put("NodeRepair", false);
    gates.put("ReservedCapacity", true);
    gates.put("SpotToSpotConsolidation", false);
    gates.put("NodeOverlay", false);
    gates.put("StaticCapacity", false);
    gates.put("CapacityBuffer", false);
    return Collections.unmodifiableMap(gates);
  }

  /**
   * Parses {@code NodeRepair=true,NodeOverlay=false} as Kubernetes' {@code MapStringBool} does
   * (blank: the defaults).
   *
   * @throws IllegalArgumentException naming the pair that is not {@code Name=true|false}
   */
  public static FeatureGates parse(String spec) {
    Map<String, Boolean> gates = new LinkedHashMap<>(KNOWN);
    if (spec != null && !spec.isBlank()) {
      for (String pair : spec.split(",")) {
        String trimmed = pair.trim();
        int eq = trimmed.indexOf('=');
        if (eq <= 0) {
          throw new IllegalArgumentException(
              "feature gate '" + trimmed + "' is not Name=true or Name=false");
        }
        String name = trimmed.substring(0, eq).trim();
        String value = trimmed.substring(eq + 1).trim().toLowerCase(Locale.ROOT);
        if (!value.equals("true") && !value.equals("false")) {
          throw new IllegalArgumentException(
              "feature gate " + name + " must be true or false, not '" + value + "'");
        }
        if (KNOWN.containsKey(name)) {
          gates.put(name, Boolean.parseBoolean(value));
        } else {
          // as upstream: a gate of a newer (or older) Karpenter is no reason to refuse to start
          LOG.warn("Ignoring feature gate {}: not one of {}", name, KNOWN.keySet());
        }
      }
    }
    return new FeatureGates(gates.get("NodeRepair"), gates.get("NodeOverlay"));
  }
}
