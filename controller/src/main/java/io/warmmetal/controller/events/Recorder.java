package io.warmmetal.controller.events;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.warmmetal.controller.karpenter.VirtualPod;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes Kubernetes Events ({@code core/v1}, source {@code karpenter}) as upstream's recorder
 * does: deduplicated by reason and dedupe values within the event's timeout, written off the
 * reconcile thread (a slow API server delays no pass), dropped rather than queued without bound
 * when it falls behind. Events on cluster-scoped objects go to {@code default}, as client-go puts
 * them.
 */
public final class Recorder implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Recorder.class);
  public static final String COMPONENT = "karpenter";

  private final KubernetesClient kube;
  private final Map<String, Instant> published = new ConcurrentHashMap<>();
  private final ThreadPoolExecutor writer =
      new ThreadPoolExecutor(
          1,
          1,
          0,
          TimeUnit.SECONDS,
          new ArrayBlockingQueue<>(1000),
          r -> {
            Thread t = new Thread(r, "warmmetal-events");
            t.setDaemon(true);
            return t;
          },
          new ThreadPoolExecutor.DiscardPolicy());

  public Recorder(KubernetesClient kube) {
    this.kube = kube;
  }

  public void publish(Iterable<Event> events) {
    events.forEach(this::publish);
  }

  public void publish(Event event) {
    if (VirtualPod.is(event.involved())) {
      return; // a CapacityBuffer's virtual pod is not in the cluster: nothing to tell
    }
    Instant now = Instant.now();
    if (!event.dedupeValues().isEmpty()) {
      Instant last = published.get(event.dedupeKey());
      if (last != null && last.plus(event.dedupeTimeout()).isAfter(now)) {
        return;
      }
      published.put(event.dedupeKey(), now);
      if (published.size() > 10_000) {
        published
            .values()
            .removeIf(at -> at.plus(Event.DEFAULT_DEDUPE.multipliedBy(3)).isBefore(now));
      }
    }
    if (event.limit() != null && !event.limit().tryAcquire()) {
      return; // as upstream: over the limit, the event is not written
    }
    writer.execute(() -> write(event, now));
  }

  private void write(Event event, Instant at) {
    HasMetadata o = event.involved();
    String namespace =
        o.getMetadata().getNamespace() == null ? "default" : o.getMetadata().getNamespace();
    ObjectReference ref =
        new ObjectReferenceBuilder()
            .withApiVersion(o.getApiVersion())
            .withKind(o.getKind())
            .withName(o.getMetadata().getName())
            .withNamespace(o.getMetadata().getNamespace())
            .withUid(o.getMetadata().getUid())
            .withResourceVersion(o.getMetadata().getResourceVersion())
            .build();
    String time = at.toString();
    try {
      kube.v1()
          .events()
          .inNamespace(namespace)
          .resource(
              new EventBuilder()
                  .withNewMetadata()
                  .withName(o.getMetadata().getName() + "." + Long.toHexString(System.nanoTime()))
                  .withNamespace(namespace)
                  .endMetadata()
                  .withInvolvedObject(ref)
                  .withType(event.type())
                  .withReason(event.reason())
                  .withMessage(event.message())
                  .withNewSource()
                  .withComponent(COMPONENT)
                  .endSource()
                  .withFirstTimestamp(time)
                  .withLastTimestamp(time)
                  .withCount(1)
                  .build())
          .create();
    } catch (RuntimeException e) {
      LOG.debug(
          "Event {} on {} not written: {}",
          event.reason(),
          o.getMetadata().getName(),
          e.getMessage());
    }
  }

  @Override
  public void close() {
    writer.shutdown();
  }
}
