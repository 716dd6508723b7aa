package io.warmmetal.agent.commands;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The agent's memory of commands, kept in {@code commands.json} in its state directory so that each command id runs
 * at most once, across reconnects and restarts: the highest seq taken, the command running (if the agent stops
 * during it, it is reported failed rather than run again) and the results not yet acknowledged by the API. Each
 * change is written (to a temporary file, then moved) before it is acted on. One log per agent; its methods are
 * called from the agent's event loop and write on a worker.
 */
public final class CommandLog {
  static final String FILE = "commands.json";

  private final Vertx vertx;
  private final Path file;
  private long lastSeq;
  private JsonObject running;
  private final List<JsonObject> unacked = new ArrayList<>();

  private CommandLog(Vertx vertx, Path file) {
    this.vertx = vertx;
    this.file = file;
  }

  /** Loads the log (blocking: call from a worker or at start-up); a command caught running becomes a failure. */
  public static CommandLog load(Vertx vertx, Path stateDir) throws IOException {
    CommandLog log = new CommandLog(vertx, stateDir.resolve(FILE));
    if (Files.exists(log.file)) {
      JsonObject json = new JsonObject(Files.readString(log.file));
      log.lastSeq = json.getLong("lastSeq", 0L);
      json.getJsonArray("unacked", new JsonArray()).forEach(r -> log.unacked.add((JsonObject) r));
      JsonObject interrupted = json.getJsonObject("running");
      if (interrupted != null) {
        log.unacked.add(result(interrupted.getString("id"), Outcome.failed(
            "the agent stopped while running it; not run again")));
        log.write();
      }
    }
    return log;
  }

  public long lastSeq() {
    return lastSeq;
  }

  /** Whether a command was taken before (it must not run again). */
  public boolean taken(long seq) {
    return seq <= lastSeq;
  }

  /** The result frame of a taken command, if it is still unacknowledged. */
  public JsonObject unackedResult(String commandId) {
    return unacked.stream().filter(r -> commandId.equals(r.getString("commandId"))).findFirst().orElse(null);
  }

  public List<JsonObject> unacked() {
    return List.copyOf(unacked);
  }

  public Future<Void> started(Command command) {
    lastSeq = Math.max(lastSeq, command.seq());
    running = new JsonObject().put("id", command.id()).put("seq", command.seq());
    return persist();
  }

  public Future<JsonObject> finished(Command command, Outcome outcome) {
    running = null;
    JsonObject result = result(command.id(), outcome);
    unacked.add(result);
    return persist().map(result);
  }

  public Future<Void> acknowledged(String commandId) {
    return unacked.removeIf(r -> commandId.equals(r.getString("commandId"))) ? persist() : Future.succeededFuture();
  }

  private static JsonObject result(String commandId, Outcome outcome) {
    return new JsonObject().put("type", "result").put("commandId", commandId)
        .put("status", outcome.succeeded() ? "succeeded" : "failed").put("message", outcome.message());
  }

  private Future<Void> persist() {
    String snapshot = new JsonObject().put("lastSeq", lastSeq).put("running", running)
        .put("unacked", new JsonArray(new ArrayList<>(unacked))).encode();
    return vertx.executeBlocking(() -> {
      synchronized (this) {
        Path tmp = file.resolveSibling(FILE + ".tmp");
        Files.writeString(tmp, snapshot);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      }
      return null;
    }, true);
  }

  private void write() throws IOException {
    Files.writeString(file, new JsonObject().put("lastSeq", lastSeq)
        .put("unacked", new JsonArray(new ArrayList<>(unacked))).encode());
  }
}
