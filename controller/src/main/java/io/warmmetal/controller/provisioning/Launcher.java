package io.warmmetal.controller.provisioning;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.warmmetal.controller.claims.NodeClaimWriter;
import io.warmmetal.controller.cloudprovider.CloudProvider;
import io.warmmetal.controller.cloudprovider.CloudProviderException;
import io.warmmetal.controller.cloudprovider.CloudProviderException.InsufficientCapacity;
import io.warmmetal.controller.cloudprovider.CloudProviderException.NodeClassNotReady;
import io.warmmetal.controller.cloudprovider.CloudProviderException.QuotaExceeded;
import io.warmmetal.controller.cloudprovider.CloudProviderException.Unavailable;
import io.warmmetal.controller.cloudprovider.Launched;
import io.warmmetal.controller.events.KarpenterEvents;
import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.NodeClaim;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.state.ClusterState;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A NodeClaim's launch: its instance created through the cloud provider (its UID the client token,
 * so a retry never launches twice) and what it got recorded on it. An answer of no capacity (or no
 * room under the project's quota) gives the claim up — deleted, its pods planned again — and rests
 * its shapes a while, as upstream's unavailable-offerings cache; a fleet that cannot answer keeps
 * the claim, to be launched again with the same token after its Retry-After.
 */
public final class Launcher {
  private static final Logger LOG = LoggerFactory.getLogger(Launcher.class);

  /**
   * How long a shape that answered InsufficientCapacity is left out of plans (counts may lag a
   * launch).
   */
  static final Duration UNAVAILABLE_FOR = Duration.ofSeconds(10);

  /** What came of one launch. */
  public sealed interface Outcome {}

  /** Launched: the claim carries its instance, to be written with {@link #record}. */
  public record Done(NodeClaim claim) implements Outcome {}

  /** No capacity, or no room under the quota: the claim is deleted. */
  public record GaveUp(String why) implements Outcome {}

  /** Not now (an outage, a node class not ready): the claim stays, to be tried after the delay. */
  public record Later(Duration after, String why) implements Outcome {}

  private final NodeClaimWriter writer;
  private final CloudProvider cloud;
  private final Recorder events;
  private final Clock clock;
  private final Runnable onPreJoinedTaken;
  private final Map<String, Instant> insufficient = new ConcurrentHashMap<>();

  /**
   * @param onPreJoinedTaken told when a launch took a pre-joined standby node, so another joins in
   *     its place
   */
  public Launcher(
      NodeClaimWriter writer,
      CloudProvider cloud,
      Recorder events,
      Clock clock,
      Runnable onPreJoinedTaken) {
    this.writer = writer;
    this.cloud = cloud;
    this.events = events;
    this.clock = clock;
    this.onPreJoinedTaken = onPreJoinedTaken;
  }

  /** Whether a shape answered InsufficientCapacity a moment ago (it is left out of plans). */
  public boolean resting(String shape) {
    Instant now = clock.instant();
    insufficient.values().removeIf(at -> at.plus(UNAVAILABLE_FOR).isBefore(now));
    return insufficient.containsKey(shape);
  }

  /** Launches the claim's instance (blocking). */
  public Outcome launch(NodeClaim claim) {
    String name = claim.getMetadata().getName();
    Launched launched;
    try {
      launched = cloud.create(claim);
    } catch (InsufficientCapacity | QuotaExceeded e) {
      // No capacity of the acceptable shapes now (or no room under the project's quota, or shapes
      // no longer offered — which upstream's providers also report as insufficient capacity):
      // forget this claim and leave those shapes out of plans for a while; the next pass plans its
      // pods again with live counts.
      LOG.info("NodeClaim {}: {}", name, e.getMessage());
      events.publish(KarpenterEvents.insufficientCapacity(claim, e.getMessage()));
      Instant now = clock.instant();
      ClusterState.acceptableTypes(claim).forEach(t -> insufficient.put(t, now));
      try {
        writer.delete(claim);
      } catch (KubernetesClientException notDeleted) {
        return new Later(Duration.ofSeconds(1), "not deleted: " + notDeleted.getMessage());
      }
      return new GaveUp(e.getMessage());
    } catch (Unavailable e) {
      LOG.info(
          "NodeClaim {}: the fleet cannot answer ({}); launching again in {}",
          name,
          e.getMessage(),
          e.retryAfter());
      return new Later(e.retryAfter(), e.getMessage());
    } catch (NodeClassNotReady e) {
      events.publish(KarpenterEvents.nodeClassNotReady(claim, e.getMessage()));
      return new Later(Duration.ofSeconds(5), e.getMessage());
    } catch (CloudProviderException e) {
      LOG.warn("NodeClaim {}: the launch was refused: {}", name, e.getMessage());
      return new Later(Duration.ofSeconds(10), e.getMessage());
    }
    apply(claim, launched);
    if (launched.instance().preJoined()) {
      LOG.info(
          "NodeClaim {}: took pre-joined standby machine {}",
          name,
          launched.instance().machineId());
      onPreJoinedTaken.run(); // a replacement joins behind it
    }
    return new Done(claim);
  }

  /** The launch on the claim, as upstream's {@code Create} hydrates it. */
  private static void apply(NodeClaim claim, Launched launched) {
    if (claim.getStatus() == null) {
      claim.setStatus(new NodeClaim.Status());
    }
    var instance = launched.instance();
    claim.getStatus().providerID = instance.providerId();
    if (launched.imageId() != null) {
      claim.getStatus().imageID = launched.imageId();
    }
    if (!launched.capacity().isEmpty()) {
      claim.getStatus().capacity = new HashMap<>(launched.capacity());
    }
    Conditions.set(
        claim.getStatus().conditions,
        Conditions.LAUNCHED,
        true,
        "Launched",
        "instance " + instance.id() + " on " + instance.machineId());
    Conditions.setReady(claim.getStatus().conditions, Conditions.NODECLAIM_READY_ON);
    if (claim.getMetadata().getAnnotations() == null) {
      claim.getMetadata().setAnnotations(new HashMap<>());
    }
    claim.getMetadata().getAnnotations().put(WellKnown.INSTANCE_ANNOTATION, instance.id());
    if (instance.preJoined()) {
      claim.getMetadata().getAnnotations().put(WellKnown.PRE_JOINED_ANNOTATION, "true");
    }
    if (claim.getMetadata().getLabels() == null) {
      claim.getMetadata().setLabels(new HashMap<>());
    }
    var labels = claim.getMetadata().getLabels();
    labels.put(WellKnown.INSTANCE_TYPE_LABEL, instance.shape());
    labels.put(WellKnown.CAPACITY_TYPE_LABEL, "on-demand");
    if (launched.zone() != null) {
      labels.put(WellKnown.ZONE_LABEL, launched.zone());
    }
    if (launched.region() != null) {
      labels.put(WellKnown.REGION_LABEL, launched.region());
    }
  }

  /**
   * Writes the launch onto the claim: its labels and annotations, then its status — two merge
   * patches, no reads: two writers of one launch (a replay, a replacement and its lifecycle) both
   * land, the same, and a burst's launches cost the API server two requests each, not four.
   */
  public NodeClaim record(Done done) {
    NodeClaim claim = done.claim();
    writer.mergeLabelsAndAnnotations(claim);
    NodeClaim written = writer.mergeStatus(claim);
    LOG.info(
        "NodeClaim {} launched: {}", claim.getMetadata().getName(), written.getStatus().providerID);
    return written;
  }
}
