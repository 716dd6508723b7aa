package io.warmmetal.api.lifecycle.impl;

import io.vertx.core.Handler;
import io.warmmetal.api.lifecycle.Committed;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The after-commit hook: tells every subscriber what a committed transaction changed. */
final class Commits {
  private static final Logger LOG = LoggerFactory.getLogger(Commits.class);

  private final List<Handler<Committed>> subscribers = new CopyOnWriteArrayList<>();

  void subscribe(Handler<Committed> subscriber) {
    subscribers.add(subscriber);
  }

  /**
   * Called once the transaction has committed; a failing subscriber neither undoes it nor stops the
   * others.
   */
  void publish(Committed committed) {
    if (committed.commandsFor().isEmpty() && !committed.poolsMoved()) {
      return;
    }
    for (Handler<Committed> s : subscribers) {
      try {
        s.handle(committed);
      } catch (RuntimeException e) {
        LOG.warn("An after-commit subscriber failed: {}", e.toString());
      }
    }
  }
}
