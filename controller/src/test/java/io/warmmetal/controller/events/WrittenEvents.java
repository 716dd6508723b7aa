package io.warmmetal.controller.events;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.warmmetal.protocol.testing.Await;
import java.time.Duration;
import java.util.List;

/**
 * The events a {@link Recorder} wrote, once every event published before is written: they are
 * written off the caller's thread, one at a time in order, so a marker published last and seen
 * written means the others are too.
 */
public final class WrittenEvents {
  private static int markers;

  private WrittenEvents() {}

  /** The events in {@code namespace}, once all published so far are written. */
  public static List<io.fabric8.kubernetes.api.model.Event> in(
      KubernetesClient kube, Recorder recorder, String namespace) throws InterruptedException {
    String name = "marker-" + markers++;
    Pod marker =
        new PodBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace("markers")
            .withUid(name)
            .endMetadata()
            .build();
    recorder.publish(new Event(marker, Event.NORMAL, "Marker", name, List.of(), Duration.ZERO));
    Await.until(
        "the events before " + name + " written",
        () ->
            kube.v1().events().inNamespace("markers").list().getItems().stream()
                .anyMatch(e -> e.getMessage().equals(name)));
    return kube.v1().events().inNamespace(namespace).list().getItems();
  }
}
