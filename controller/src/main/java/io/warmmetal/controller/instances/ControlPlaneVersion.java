package io.warmmetal.controller.instances;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster's Kubernetes version ({@code GET /version}, which every client may read), sent with
 * each join so that a host whose kubelet the control plane would not accept fails at once, saying
 * so. Read again every few minutes: a control plane is upgraded under a running controller. Unknown
 * (null) while it cannot be read: the join goes without the check rather than not at all.
 */
public final class ControlPlaneVersion {
  private static final Logger LOG = LoggerFactory.getLogger(ControlPlaneVersion.class);
  private static final Duration FRESH = Duration.ofMinutes(5);

  private final KubernetesClient kube;
  private String version;
  private Instant readAt = Instant.MIN;

  public ControlPlaneVersion(KubernetesClient kube) {
    this.kube = kube;
  }

  public synchronized String get() {
    Instant now = Instant.now();
    if (readAt.plus(FRESH).isBefore(now)) {
      try {
        version = kube.getKubernetesVersion().getGitVersion();
      } catch (KubernetesClientException e) {
        LOG.debug(
            "The control plane's version could not be read ({}); joins go without the version check",
            e.getMessage());
      }
      readAt = now;
    }
    return version;
  }
}
