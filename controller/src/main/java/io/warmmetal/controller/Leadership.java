package io.warmmetal.controller;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One active controller among replicas: a {@code coordination.k8s.io} Lease names the leader, which
 * runs the controller while it holds the lease; the others wait to take over.
 */
public final class Leadership {
  private static final Logger LOG = LoggerFactory.getLogger(Leadership.class);

  /** Lease timing: how long a lease lasts, the deadline to renew it, how often to try. */
  public record Timing(Duration lease, Duration renewDeadline, Duration retry) {
    public static final Timing DEFAULT =
        new Timing(Duration.ofSeconds(15), Duration.ofSeconds(10), Duration.ofSeconds(2));
  }

  /** The variable the manifests set to the pod's name (downward API): its name in the Lease. */
  public static final String POD_NAME_VARIABLE = "POD_NAME";

  private Leadership() {}

  /**
   * This replica's name in the Lease: its pod's ({@code POD_NAME}, which the manifests set from the
   * downward API), else the container's host name ({@code HOSTNAME}), else {@code
   * warmmetal-controller} — never a name lookup, which fails where the host name is in no DNS (a
   * pod on the node's network) — and a random suffix, so a restarted replica is a new holder.
   */
  public static String identity(Map<String, String> env) {
    String name = env.getOrDefault(POD_NAME_VARIABLE, "");
    if (name.isBlank()) {
      name = env.getOrDefault("HOSTNAME", "");
    }
    if (name.isBlank()) {
      name = "warmmetal-controller";
    }
    return name + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  /**
   * Competes for the lease {@code name} in {@code namespace}; {@code onLead} runs when this replica
   * becomes leader, {@code onLose} when it stops being one. The future completes when the election
   * ends (this replica lost or was stopped).
   */
  public static CompletableFuture<?> run(
      KubernetesClient kube,
      String namespace,
      String name,
      String identity,
      Timing timing,
      Runnable onLead,
      Runnable onLose) {
    return kube.leaderElector()
        .withConfig(
            new LeaderElectionConfigBuilder()
                .withName(name)
                .withLock(new LeaseLock(namespace, name, identity))
                .withLeaseDuration(timing.lease())
                .withRenewDeadline(timing.renewDeadline())
                .withRetryPeriod(timing.retry())
                .withReleaseOnCancel(true)
                .withLeaderCallbacks(
                    new LeaderCallbacks(
                        () -> {
                          LOG.info("{} leads", identity);
                          onLead.run();
                        },
                        () -> {
                          LOG.info("{} stopped leading", identity);
                          onLose.run();
                        },
                        leader -> LOG.info("The leader is {}", leader)))
                .build())
        .build()
        .start();
  }
}
