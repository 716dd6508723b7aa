package io.warmmetal.controller.instances;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warmmetal.controller.cloudprovider.Catalog;
import io.warmmetal.controller.cloudprovider.CloudProviderException;
import io.warmmetal.controller.cloudprovider.CloudProviderException.Rejected;
import io.warmmetal.controller.cloudprovider.CloudProviderException.Unavailable;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import io.warmmetal.controller.scheduling.InstanceType;
import io.warmmetal.controller.scheduling.Resources;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Plans read instance types from memory: the cache reads each node class in the background, tells
 * the planner when what it offers changes, keeps a failure as a failure (never as "nothing
 * offered"), and reads again at once when asked (a launch took a machine).
 */
class ShapesCacheTest {
  /** Answers the cache's reads one by one, as the test hands them out. */
  private final BlockingQueue<Object> answers = new LinkedBlockingQueue<>();

  private final AtomicInteger reads = new AtomicInteger();
  private final Semaphore changes = new Semaphore(0);

  private ShapesCache cache(Duration every) {
    return new ShapesCache(
        nodeClass -> {
          reads.incrementAndGet();
          Object answer = answers.poll(10, TimeUnit.SECONDS);
          if (answer instanceof CloudProviderException e) {
            throw e;
          }
          return (Catalog) answer;
        },
        every,
        Clock.systemUTC(),
        changes::release);
  }

  private static WarmMetalNodeClass nodeClass(String endpoint) {
    WarmMetalNodeClass nodeClass = new WarmMetalNodeClass();
    nodeClass.getMetadata().setName("default");
    nodeClass.getSpec().endpoint = endpoint;
    return nodeClass;
  }

  private static Catalog catalog(int warm) {
    InstanceType type =
        new InstanceType(
            "x86-16c-64g",
            Map.of(),
            Resources.of(16000, 64L << 30),
            0.5,
            warm,
            List.of(new InstanceType.Offering("r1", null, warm, warm)));
    return new Catalog(List.of(type), warm > 0 ? Set.of("x86-16c-64g") : Set.of(), Instant.now());
  }

  private void awaitChange() throws InterruptedException {
    assertThat(changes.tryAcquire(10, TimeUnit.SECONDS)).as("the planner is told").isTrue();
  }

  @Test
  void aNodeClassIsReadInTheBackgroundAndThePlannerToldWhenItsOfferChanges() throws Exception {
    try (ShapesCache cache = cache(Duration.ofHours(1))) {
      WarmMetalNodeClass nodeClass = nodeClass("http://127.0.0.1:1");
      assertThatThrownBy(() -> cache.get(nodeClass)).isInstanceOf(Unavailable.class);
      assertThat(cache.known(nodeClass)).isFalse();

      answers.add(catalog(3));
      awaitChange();
      assertThat(cache.known(nodeClass)).isTrue();
      assertThat(cache.get(nodeClass).types().get(0).warm()).isEqualTo(3);

      cache.refresh(nodeClass); // a launch took one
      answers.add(catalog(2));
      awaitChange();
      assertThat(cache.get(nodeClass).types().get(0).warm()).isEqualTo(2);
      assertThat(reads.get()).isEqualTo(2);
    }
  }

  @Test
  void aFailedReadIsAFailureNotAnEmptyFleet() throws Exception {
    try (ShapesCache cache = cache(Duration.ofHours(1))) {
      WarmMetalNodeClass nodeClass = nodeClass("http://127.0.0.1:1");
      cache.refresh(nodeClass);
      answers.add(new Unavailable("503 ServiceUnavailable", Duration.ofSeconds(2)));
      awaitChange();
      assertThatThrownBy(() -> cache.get(nodeClass))
          .isInstanceOfSatisfying(
              Unavailable.class, e -> assertThat(e.retryAfter()).isEqualTo(Duration.ofSeconds(2)));
      assertThat(cache.known(nodeClass)).isTrue();

      cache.refresh(nodeClass);
      answers.add(catalog(1));
      awaitChange();
      assertThat(cache.get(nodeClass).available()).containsExactly("x86-16c-64g");
    }
  }

  @Test
  void duringAnOutageTheLastGoodReadStandsInButNotARefusal() throws Exception {
    try (ShapesCache cache = cache(Duration.ofHours(1))) {
      WarmMetalNodeClass nodeClass = nodeClass("http://127.0.0.1:1");
      cache.refresh(nodeClass);
      answers.add(catalog(4));
      awaitChange();
      cache.refresh(nodeClass);
      answers.add(new Unavailable("connection refused", Duration.ofSeconds(1)));
      awaitChange();
      assertThat(cache.get(nodeClass).types().get(0).warm())
          .as("plans go on with what was there a moment ago")
          .isEqualTo(4);

      cache.refresh(nodeClass);
      answers.add(new Rejected("Unauthorized", "401 Unauthorized: token revoked"));
      awaitChange();
      assertThatThrownBy(() -> cache.get(nodeClass)).isInstanceOf(Rejected.class);
    }
  }

  @Test
  void aNodeClassPointedElsewhereIsReadAgainBeforeItsOldOfferIsUsed() throws Exception {
    try (ShapesCache cache = cache(Duration.ofHours(1))) {
      cache.refresh(nodeClass("http://127.0.0.1:1"));
      answers.add(catalog(5));
      awaitChange();
      WarmMetalNodeClass moved = nodeClass("http://127.0.0.1:2");
      assertThatThrownBy(() -> cache.get(moved)).isInstanceOf(Unavailable.class);
      answers.add(catalog(0));
      awaitChange();
      assertThat(cache.get(moved).available()).isEmpty();
    }
  }

  @Test
  void everyNodeClassIsReadAgainOnItsPeriod() throws Exception {
    try (ShapesCache cache = cache(Duration.ofMillis(20))) {
      WarmMetalNodeClass nodeClass = nodeClass("http://127.0.0.1:1");
      cache.refresh(nodeClass);
      for (int warm = 1; warm <= 3; warm++) {
        answers.add(catalog(warm)); // each a change: the planner is told of each
        awaitChange();
      }
      assertThat(reads.get()).isGreaterThanOrEqualTo(3);
    }
  }
}
