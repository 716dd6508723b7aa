package io.warmmetal.fleet.kubelet;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What real kubelets do for their Nodes, done for all the Nodes simulated agents registered in one
 * cluster, so a real control plane treats them as alive: a heartbeat (the node's Lease in {@code
 * kube-node-lease}, renewed every 10 s, as the kubelet's node-lease controller does — without it
 * kube-controller-manager marks the Node unreachable after 40 s and evicts its pods); the pods
 * bound to them reported running and Ready; a pod being deleted (evicted, drained) removed once its
 * deletion is asked for, as a kubelet does after stopping its containers. One pod watch and one
 * timer for every node; Kubernetes calls happen on this class's own threads.
 */
public final class SimulatedNodes implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SimulatedNodes.class);
  private static final int LEASE_SECONDS = 40;

  private final KubernetesClient kube;
  private final Set<String> nodes = ConcurrentHashMap.newKeySet();
  private final ScheduledExecutorService heartbeats =
      Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "simulated-node-leases"));
  private final ExecutorService pods =
      Executors.newFixedThreadPool(4, r -> daemon(r, "simulated-kubelet-pods"));
  private SharedIndexInformer<Pod> informer;

  public SimulatedNodes(KubernetesClient kube) {
    this.kube = kube;
    heartbeats.scheduleWithFixedDelay(this::renewLeases, 10, 10, TimeUnit.SECONDS);
  }

  /** The nodes of the cluster this kubeconfig reaches. */
  public static SimulatedNodes connect(Path kubeconfig) throws IOException {
    return new SimulatedNodes(
        new KubernetesClientBuilder()
            .withConfig(Config.fromKubeconfig(Files.readString(kubeconfig)))
            .build());
  }

  public KubernetesClient kube() {
    return kube;
  }

  /** A Node was registered: keep it alive and run its pods. */
  public synchronized void add(String node) {
    nodes.add(node);
    renew(node);
    if (informer == null) {
      // Only pods bound somewhere; the handler keeps those on our nodes.
      informer =
          kube.pods()
              .inAnyNamespace()
              .withoutField("spec.nodeName", "")
              .inform(
                  new ResourceEventHandler<>() {
                    @Override
                    public void onAdd(Pod pod) {
                      pods.submit(() -> actOn(pod));
                    }

                    @Override
                    public void onUpdate(Pod old, Pod pod) {
                      pods.submit(() -> actOn(pod));
                    }

                    @Override
                    public void onDelete(Pod pod, boolean unknown) {}
                  },
                  0);
    } else {
      // Pods bound before the node was ours (a node registered again) are looked at now.
      informer.getStore().list().stream()
          .filter(p -> node.equals(p.getSpec().getNodeName()))
          .forEach(p -> pods.submit(() -> actOn(p)));
    }
  }

  /** Its Node went: stop its heartbeat. */
  public void remove(String node) {
    nodes.remove(node);
    try {
      kube.leases().inNamespace("kube-node-lease").withName(node).delete();
    } catch (KubernetesClientException e) {
      LOG.debug("Lease of {} not deleted: {}", node, e.getMessage());
    }
  }

  private void actOn(Pod pod) {
    if (!nodes.contains(pod.getSpec().getNodeName())) {
      return;
    }
    try {
      if (pod.getMetadata().getDeletionTimestamp() != null) {
        // The containers are "stopped" at once: confirm the deletion as the kubelet does, with no
        // grace left.
        kube.pods()
            .inNamespace(pod.getMetadata().getNamespace())
            .withName(pod.getMetadata().getName())
            .withGracePeriod(0)
            .delete();
      } else if (!running(pod)) {
        kube.pods()
            .inNamespace(pod.getMetadata().getNamespace())
            .resource(runningCopy(pod))
            .updateStatus();
      }
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404
          && e.getCode() != 409) { // gone, or changed meanwhile: its next event comes
        LOG.warn(
            "Simulated kubelet could not update pod {}/{}: {}",
            pod.getMetadata().getNamespace(),
            pod.getMetadata().getName(),
            e.getMessage());
      }
    }
  }

  private static boolean running(Pod pod) {
    return pod.getStatus() != null && "Running".equals(pod.getStatus().getPhase());
  }

  private static Pod runningCopy(Pod pod) {
    Pod copy = Serialization.clone(pod);
    String now = Instant.now().toString();
    List<PodCondition> conditions = new ArrayList<>();
    for (String type : List.of("PodScheduled", "Initialized", "ContainersReady", "Ready")) {
      conditions.add(
          new PodConditionBuilder()
              .withType(type)
              .withStatus("True")
              .withLastTransitionTime(now)
              .build());
    }
    List<ContainerStatus> containers = new ArrayList<>();
    pod.getSpec()
        .getContainers()
        .forEach(
            c ->
                containers.add(
                    new ContainerStatusBuilder()
                        .withName(c.getName())
                        .withImage(c.getImage())
                        .withImageID("")
                        .withReady(true)
                        .withStarted(true)
                        .withRestartCount(0)
                        .withNewState()
                        .withNewRunning()
                        .withStartedAt(now)
                        .endRunning()
                        .endState()
                        .build()));
    copy.setStatus(
        new PodStatusBuilder(pod.getStatus() == null ? new PodStatus() : pod.getStatus())
            .withPhase("Running")
            .withConditions(conditions)
            .withContainerStatuses(containers)
            .withStartTime(now)
            .withHostIP("192.0.2.1")
            .withPodIP("192.0.2.2")
            .build());
    return copy;
  }

  private void renewLeases() {
    nodes.forEach(this::renew);
  }

  private void renew(String node) {
    try {
      Lease lease =
          new LeaseBuilder()
              .withNewMetadata()
              .withName(node)
              .withNamespace("kube-node-lease")
              .endMetadata()
              .withNewSpec()
              .withHolderIdentity(node)
              .withLeaseDurationSeconds(LEASE_SECONDS)
              .withRenewTime(Instant.now().atZone(ZoneOffset.UTC))
              .endSpec()
              .build();
      kube.leases().inNamespace("kube-node-lease").resource(lease).createOr(l -> l.update());
    } catch (KubernetesClientException e) {
      LOG.debug("Lease of {} not renewed: {}", node, e.getMessage());
    }
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  @Override
  public synchronized void close() {
    heartbeats.shutdownNow();
    pods.shutdownNow();
    if (informer != null) {
      informer.close();
    }
  }
}
