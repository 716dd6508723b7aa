package io.warmmetal.agent.commands;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.warmmetal.protocol.MalformedFrame;
import io.warmmetal.protocol.channel.Command;
import io.warmmetal.protocol.channel.Frame;
import io.warmmetal.protocol.channel.Result;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The agent's memory of commands, kept in {@code commands.json} in its state directory so that each
 * command id runs at most once, across reconnects and restarts: the highest seq taken, the command
 * running (if the agent stops during it, it is reported failed rather than run again) and the
 * results not yet acknowledged by the API. Each change is written (to a temporary file, then moved)
 * before it is acted on. One log per agent; its methods are called from the agent's event loop and
 * write on a worker.
 */
public final class CommandLog {
  static final String FILE = "commands.json";

  private final Vertx vertx;
  private final Path file;
  private long lastSeq;
  private JsonObject running;
  private FileChannel lock;
  private final List<Result> unacked = new ArrayList<>();

  private CommandLog(Vertx vertx, Path file) {
    this.vertx = vertx;
    this.file = file;
  }

  /**
   * Loads the log (blocking: call from a worker or at start-up); a command caught running becomes a
   * failure. Holds a lock on the state directory for the life of the process, so two agents never
   * run one machine's commands.
   */
  public static CommandLog load(Vertx vertx, Path stateDir) throws IOException {
    CommandLog log = new CommandLog(vertx, stateDir.resolve(FILE));
    FileChannel lock =
        FileChannel.open(
            stateDir.resolve(".agent.lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    FileLock held;
    try {
      held = lock.tryLock();
    } catch (OverlappingFileLockException heldInThisProcess) {
      held = null;
    }
    if (held == null) {
      lock.close();
      throw new IOException("another agent is running with the state directory " + stateDir);
    }
    log.lock = lock;
    if (Files.exists(log.file)) {
      JsonObject json;
      try {
        json = new JsonObject(Files.readString(log.file));
      } catch (DecodeException e) {
        throw new IOException(
            log.file
                + " is damaged; move it away to start over (commands in it may then run"
                + " again)",
            e);
      }
      log.lastSeq = json.getLong("lastSeq", 0L);
      try {
        json.getJsonArray("unacked", new JsonArray())
            .forEach(r -> log.unacked.add((Result) Frame.parse((JsonObject) r)));
      } catch (MalformedFrame | ClassCastException e) {
        throw new IOException(
            log.file + " holds a result the agent cannot read; move it away to start over", e);
      }
      JsonObject interrupted = json.getJsonObject("running");
      if (interrupted != null) {
        log.unacked.add(
            Result.failed(
                interrupted.getString("id"), "the agent stopped while running it; not run again"));
        log.writeNow(log.snapshot());
      }
    }
    return log;
  }

  /** Lets go of the state directory (the agent is stopping). */
  public void close() {
    try {
      if (lock != null) {
        lock.close();
        lock = null;
      }
    } catch (IOException e) {
      // closing a lock file
    }
  }

  public long lastSeq() {
    return lastSeq;
  }

  /** Whether a command was taken before (it must not run again). */
  public boolean taken(long seq) {
    return seq <= lastSeq;
  }

  /** The result frame of a taken command, if it is still unacknowledged. */
  public Result unackedResult(String commandId) {
    return unacked.stream().filter(r -> commandId.equals(r.commandId())).findFirst().orElse(null);
  }

  public List<Result> unacked() {
    return List.copyOf(unacked);
  }

  public Future<Void> started(Command command) {
    lastSeq = Math.max(lastSeq, command.seq());
    running = new JsonObject().put("id", command.id()).put("seq", command.seq());
    return persist();
  }

  public Future<Result> finished(Command command, Outcome outcome) {
    running = null;
    Result result = outcome.of(command);
    unacked.add(result);
    return persist().map(result);
  }

  public Future<Void> acknowledged(String commandId) {
    return unacked.removeIf(r -> commandId.equals(r.commandId()))
        ? persist()
        : Future.succeededFuture();
  }

  private String snapshot() {
    return new JsonObject()
        .put("lastSeq", lastSeq)
        .put("running", running)
        .put("unacked", new JsonArray(unacked.stream().map(Result::toJson).toList()))
        .encode();
  }

  private Future<Void> persist() {
    String snapshot = snapshot();
    return vertx.executeBlocking(
        () -> {
          writeNow(snapshot);
          return null;
        },
        true);
  }

  /**
   * Writes durably: the new content reaches the disk before it replaces the old (a power cut leaves
   * one or the other).
   */
  private synchronized void writeNow(String snapshot) throws IOException {
    Path tmp = file.resolveSibling(FILE + ".tmp");
    try (FileChannel out =
        FileChannel.open(
            tmp,
            StandardOpenOption.CREATE,
            StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING)) {
      out.write(ByteBuffer.wrap(snapshot.getBytes(StandardCharsets.UTF_8)));
      out.force(true);
    }
    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    try (FileChannel dir = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
      dir.force(true); // the rename itself
    } catch (IOException directoriesCannotSync) {
      // some filesystems refuse to sync a directory; the file itself is on disk
    }
  }
}
