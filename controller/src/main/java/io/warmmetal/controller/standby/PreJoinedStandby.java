package io.warmmetal.controller.standby;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.instances.InstancesApi;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.NodeReadiness;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass.PreJoined;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass.PreJoinedStatus;
import io.warmmetal.controller.provisioning.BootstrapTokens;
import io.warmmetal.controller.provisioning.ControlPlaneVersion;
import io.warmmetal.controller.provisioning.Joins;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps each node class's pre-joined standby nodes ({@code spec.preJoined}): machines joined to the
 * cluster ahead of time, as Nodes that belong to no NodePool, carry the {@code
 * warmmetal.io/standby} label and taint (NoSchedule and NoExecute) and wait for a NodeClaim to take
 * one without a join (the provisioner's launches allow it; registration then gives the Node the
 * claim's labels, taints and owner and lifts the standby taint).
 *
 * <p>The instances API is the record: a standby node is a standby instance ({@code standby: true})
 * labelled with its node class, its entry and the class's hash, so a restarted controller counts
 * the same ones. Each pass (at most every {@link #EVERY}, or at once after a launch took one) it
 * joins what an entry lacks, one launch per node; terminates what is no longer asked for — more
 * than the count, an entry removed, a node class changed since (as drift would), a node whose
 * kubelet has not been Ready for {@code unhealthyAfter} or that never registered — so its machine
 * is reset and joined again; and deletes the Node object of a standby machine no longer standby
 * that no NodeClaim took. An entry that cannot be filled (no machine, a quota) says so in the node
 * class's status and an event, and is tried again after {@link #SHORT_BACKOFF}.
 */
public final class PreJoinedStandby {
  private static final Logger LOG = LoggerFactory.getLogger(PreJoinedStandby.class);
  static final Duration EVERY = Duration.ofSeconds(2);
  static final Duration SHORT_BACKOFF = Duration.ofSeconds(10);
  public static final Duration UNHEALTHY_AFTER = Duration.ofMinutes(2);

  /** A Node left by a standby machine that stopped being one, kept this long for its claim. */
  static final Duration ORPHAN_GRACE = Duration.ofSeconds(30);

  private static final int LAUNCHES_PER_PASS = 8;

  private final KubernetesClient kube;
  private final Function<WarmMetalNodeClass, InstancesApi> apis;
  private final Recorder events;
  private final ControlPlaneVersion controlPlane;
  private final Duration unhealthyAfter;
  private final Map<String, List<PreJoinedStatus>> report = new ConcurrentHashMap<>();
  private final Map<String, Instant> shortUntil = new HashMap<>();
  private final Map<String, Instant> orphanSince = new HashMap<>();

  /** Node classes that had standby instances at their last count (asked again until none). */
  private final Set<String> holding = new HashSet<>();

  /** What pre-joined CapacityBuffers ask of each node class, beside its {@code spec.preJoined}. */
  private volatile Map<String, List<PreJoined>> fromBuffers = Map.of();

  private volatile boolean due = true;
  private Instant lastRun = Instant.EPOCH;

  public PreJoinedStandby(
      KubernetesClient kube,
      Function<WarmMetalNodeClass, InstancesApi> apis,
      Recorder events,
      Duration unhealthyAfter) {
    this.kube = kube;
    this.apis = apis;
    this.events = events;
    this.controlPlane = new ControlPlaneVersion(kube);
    this.unhealthyAfter = unhealthyAfter;
  }

  /**
   * The standby nodes pre-joined CapacityBuffers need, per node class (added to its own entries:
   * the same type and zone count together).
   */
  public void fromBuffers(Map<String, List<PreJoined>> wanted) {
    if (!wanted.equals(fromBuffers)) {
      due = true;
    }
    fromBuffers = Map.copyOf(wanted);
  }

  /** Counts again in the next pass rather than after {@link #EVERY}: one was taken. */
  public void wake() {
    due = true;
  }

  /** The node class's entries as last counted, or null if it keeps none. */
  public List<PreJoinedStatus> status(String nodeClass) {
    return report.get(nodeClass);
  }

  public void reconcile(
      List<WarmMetalNodeClass> nodeClasses, List<Node> nodes, List<NodeClaim> claims) {
    Instant now = Instant.now();
    if (!due && lastRun.plus(EVERY).isAfter(now)) {
      return;
    }
    due = false;
    lastRun = now;
    Map<String, Node> byProvider = new HashMap<>();
    for (Node n : nodes) {
      if (n.getSpec() != null && n.getSpec().getProviderID() != null) {
        byProvider.put(n.getSpec().getProviderID(), n);
      }
    }
    Set<String> standbyMachines = new HashSet<>();
    boolean countedAll = true;
    for (WarmMetalNodeClass nodeClass : nodeClasses) {
      String name = nodeClass.getMetadata().getName();
      if (nodeClass.getSpec().preJoined.isEmpty()
          && !holding.contains(name)
          && !fromBuffers.containsKey(name)) {
        report.remove(name);
        continue;
      }
      try {
        List<JsonNode> live = count(nodeClass, byProvider, now);
        live.forEach(i -> standbyMachines.add(i.get("providerId").asText()));
        if (live.isEmpty()) {
          holding.remove(name);
        } else {
          holding.add(name);
        }
      } catch (IOException e) {
        countedAll = false;
        LOG.warn("WarmMetalNodeClass {}: standby nodes not counted ({})", name, e.getMessage());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
    report.keySet().retainAll(nodeClasses.stream().map(c -> c.getMetadata().getName()).toList());
    if (countedAll) {
      deleteLeftNodes(nodes, claims, standbyMachines, now);
    }
  }

  /**
   * One node class: retires what is not wanted, joins what is missing; returns its standby
   * instances that stay.
   */
  private List<JsonNode> count(
      WarmMetalNodeClass nodeClass, Map<String, Node> byProvider, Instant now)
      throws IOException, InterruptedException {
    InstancesApi api = apis.apply(nodeClass);
    String name = nodeClass.getMetadata().getName();
    List<JsonNode> live = new ArrayList<>();
    for (String state : List.of("pending", "running")) {
      for (JsonNode i : api.selected(WellKnown.STANDBY_OF_LABEL + "=" + name, state)) {
        if (i.path("standby").asBoolean(false)) {
          live.add(i);
        }
      }
    }
    String hash = nodeClass.hash();
    Map<String, PreJoined> entries = new LinkedHashMap<>();
    List<PreJoined> wanted = new ArrayList<>(nodeClass.getSpec().preJoined);
    wanted.addAll(fromBuffers.getOrDefault(name, List.of()));
    for (PreJoined e : wanted) {
      PreJoined sum = entries.get(e.key());
      entries.put(
          e.key(),
          new PreJoined(
              e.instanceType,
              (sum == null ? 0 : sum.count) + (e.count == null ? 0 : e.count),
              e.zone));
    }
    List<JsonNode> kept = new ArrayList<>();
    for (JsonNode instance : live) {
      String why;
      if (!entries.containsKey(label(instance, WellKnown.STANDBY_ENTRY_LABEL))) {
        why = "its node class no longer asks for it";
      } else if (!hash.equals(label(instance, WellKnown.NODECLASS_HASH_LABEL))) {
        why = "its node class changed since it joined";
      } else {
        why = unhealthy(instance, byProvider.get(instance.get("providerId").asText()), now);
      }
      if (why == null) {
        kept.add(instance);
      } else {
        retire(api, nodeClass, instance, why);
      }
    }
    List<PreJoinedStatus> statuses = new ArrayList<>();
    List<JsonNode> stay = new ArrayList<>();
    for (PreJoined entry : entries.values()) {
      List<JsonNode> mine =
          new ArrayList<>(
              kept.stream()
                  .filter(i -> entry.key().equals(label(i, WellKnown.STANDBY_ENTRY_LABEL)))
                  .toList());
      int count = entry.count == null ? 0 : entry.count;
      // More than asked for: the ones still joining go first, then the newest.
      mine.sort(
          Comparator.comparing((JsonNode i) -> "running".equals(i.get("state").asText()))
              .thenComparing(i -> i.get("createdAt").asText(), Comparator.reverseOrder()));
      while (mine.size() > count) {
        retire(api, nodeClass, mine.remove(0), "more than its node class asks for");
      }
      stay.addAll(mine);
      int ready =
          (int)
              mine.stream()
                  .filter(i -> "running".equals(i.get("state").asText()))
                  .filter(i -> NodeReadiness.ready(byProvider.get(i.get("providerId").asText())))
                  .count();
      int joining = mine.size() - ready;
      String message = null;
      int missing = count - mine.size();
      String shortKey = name + "/" + entry.key();
      for (int k = 0; k < Math.min(missing, LAUNCHES_PER_PASS); k++) {
        Instant until = shortUntil.get(shortKey);
        if (until != null && until.isAfter(now)) {
          message = "waiting before trying again: too few machines a moment ago";
          break;
        }
        try {
          JsonNode instance = api.launch(request(nodeClass, entry, hash));
          joining++;
          events.publish(
              StandbyEvents.launched(nodeClass, entry.key(), instance.get("id").asText()));
          LOG.info(
              "WarmMetalNodeClass {}: joining standby node {} for {}",
              name,
              instance.get("id").asText(),
              entry.key());
        } catch (InstancesApi.ApiException e) {
          if (e.status() != 503 && e.status() != 403 && !e.noSuchShape()) {
            throw e;
          }
          message = e.getMessage();
          shortUntil.put(shortKey, now.plus(SHORT_BACKOFF));
          events.publish(StandbyEvents.shortOfMachines(nodeClass, entry.key(), e.getMessage()));
          break;
        }
      }
      statuses.add(new PreJoinedStatus(entry, ready, joining, message));
    }
    report.put(name, statuses);
    return stay;
  }

  /** A standby launch for one node of the entry: its own token, the standby label and taints. */
  private ObjectNode request(WarmMetalNodeClass nodeClass, PreJoined entry, String hash) {
    String launch = UUID.randomUUID().toString();
    ObjectNode request = InstancesApi.object();
    // A fresh token per launch: a launch whose answer was lost is found by the next count (the
    // API is the record) and, if one too many, retired there.
    request.put("clientToken", "standby-" + launch);
    request.put("standby", true);
    request.put("allowPreparing", true);
    request.put("allowStandby", nodeClass.getSpec().launchesFromStandby());
    request.putArray("shapes").add(entry.instanceType);
    request
        .putObject("labels")
        .put(WellKnown.STANDBY_OF_LABEL, nodeClass.getMetadata().getName())
        .put(WellKnown.STANDBY_ENTRY_LABEL, entry.key())
        .put(WellKnown.NODECLASS_HASH_LABEL, hash);
    ObjectNode machineLabels = null;
    if (entry.zone != null) {
      machineLabels = request.putObject("machineLabels");
      machineLabels.put(nodeClass.getSpec().zoneLabelOrDefault(), entry.zone);
    }
    String image = nodeClass.getSpec().image;
    if (image != null && !image.isBlank()) {
      machineLabels = machineLabels == null ? request.putObject("machineLabels") : machineLabels;
      machineLabels.put(WellKnown.IMAGE_MACHINE_LABEL, image);
    }
    request.set(
        "kubernetes",
        Joins.of(
            nodeClass,
            BootstrapTokens.forClaim(kube, launch, Duration.ofHours(1)),
            Map.of(
                WellKnown.STANDBY,
                nodeClass.getMetadata().getName(),
                WellKnown.CAPACITY_TYPE_LABEL,
                "on-demand"),
            standbyTaints(),
            controlPlane.get()));
    return request;
  }

  /** The taints a standby node joins with: nothing but what tolerates everything lands there. */
  public static List<Taint> standbyTaints() {
    return List.of(
        new TaintBuilder().withKey(WellKnown.STANDBY).withEffect("NoSchedule").build(),
        new TaintBuilder().withKey(WellKnown.STANDBY).withEffect("NoExecute").build());
  }

  /**
   * Why a standby node is no use (its kubelet not Ready for {@code unhealthyAfter}, or no Node that
   * long after its join succeeded), or null.
   */
  private String unhealthy(JsonNode instance, Node node, Instant now) {
    if (!"running".equals(instance.get("state").asText())) {
      return null; // still joining: the API's join timeout watches that
    }
    if (node == null) {
      String runningAt = instance.path("runningAt").asText(null);
      return runningAt != null && Instant.parse(runningAt).plus(unhealthyAfter).isBefore(now)
          ? "its Node never registered"
          : null;
    }
    NodeCondition readyCondition = NodeReadiness.condition(node);
    if (readyCondition == null || "True".equals(readyCondition.getStatus())) {
      return null;
    }
    String since = readyCondition.getLastTransitionTime();
    return since != null && Instant.parse(since).plus(unhealthyAfter).isBefore(now)
        ? "its Node has not been Ready since " + since
        : null;
  }

  private void retire(InstancesApi api, WarmMetalNodeClass nodeClass, JsonNode instance, String why)
      throws IOException, InterruptedException {
    String id = instance.get("id").asText();
    LOG.info(
        "WarmMetalNodeClass {}: standby instance {}: {}",
        nodeClass.getMetadata().getName(),
        id,
        why);
    events.publish(StandbyEvents.replaced(nodeClass, id, why));
    api.terminate(id);
  }

  /**
   * A standby Node whose machine is no longer a standby one of ours (retired: it is being reset)
   * and that no NodeClaim took goes, once it has been so for {@link #ORPHAN_GRACE} (a launch that
   * took it records its claim within that).
   */
  private void deleteLeftNodes(
      List<Node> nodes, List<NodeClaim> claims, Set<String> standbyMachines, Instant now) {
    Set<String> claimed = new HashSet<>();
    for (NodeClaim claim : claims) {
      if (claim.getStatus() != null && claim.getStatus().providerID != null) {
        claimed.add(claim.getStatus().providerID);
      }
    }
    Set<String> seen = new HashSet<>();
    for (Node node : nodes) {
      Map<String, String> labels = node.getMetadata().getLabels();
      String provider = node.getSpec() == null ? null : node.getSpec().getProviderID();
      if (labels == null
          || !labels.containsKey(WellKnown.STANDBY)
          || provider == null
          || standbyMachines.contains(provider)
          || claimed.contains(provider)) {
        continue;
      }
      String name = node.getMetadata().getName();
      seen.add(name);
      Instant since = orphanSince.computeIfAbsent(name, n -> now);
      if (since.plus(ORPHAN_GRACE).isAfter(now)) {
        continue;
      }
      try {
        kube.nodes().withName(name).delete();
        LOG.info("Standby Node {} deleted: its machine is no longer standby", name);
      } catch (KubernetesClientException e) {
        LOG.warn("Standby Node {} not deleted ({}); next pass", name, e.getMessage());
      }
    }
    orphanSince.keySet().retainAll(seen);
  }

  private static String label(JsonNode instance, String key) {
    return instance.path("labels").path(key).asText(null);
  }
}
