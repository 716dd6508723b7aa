package io.warmmetal.api.channel;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.crypto.SecretBox;
import io.warmmetal.api.http.OutageLog;
import io.warmmetal.api.lifecycle.Instance;
import io.warmmetal.protocol.Fields;
import io.warmmetal.protocol.channel.Channel;
import io.warmmetal.protocol.channel.Command;
import io.warmmetal.protocol.commands.CommandKind;
import io.warmmetal.protocol.commands.CommandParams;
import io.warmmetal.protocol.commands.JoinParams;
import io.warmmetal.protocol.commands.KubernetesJoin;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends a connected agent its open commands after the last one it has, in seq order, marking them
 * delivered. A join carries the instance's join parameters with the bootstrap token (or the user
 * data), unsealed on a worker thread: this TLS channel is the only place a secret leaves the
 * database.
 */
final class CommandDelivery {
  private static final Logger LOG = LoggerFactory.getLogger(CommandDelivery.class);
  private static final OutageLog OUTAGE =
      new OutageLog(
          LOG,
          "Delivering commands failed, database unavailable",
          "deliveries",
          Duration.ofSeconds(60));

  private final Vertx vertx;
  private final Pool db;
  private final SecretBox secrets;
  private final AtomicLong finished = new AtomicLong();

  CommandDelivery(Vertx vertx, Pool db, SecretBox secrets) {
    this.vertx = vertx;
    this.db = db;
    this.secrets = secrets;
  }

  /**
   * Delivers what is new for the session; runs on the session's event loop, one delivery at a time.
   */
  void deliver(AgentSession session) {
    session.context.runOnContext(
        v -> {
          if (!session.helloed || !session.beginDelivery()) {
            return;
          }
          frames(session.machineId, session.certSerial, session.lastSentSeq)
              .onComplete(
                  ar -> {
                    if (ar.succeeded() && ar.result() == null) {
                      // Re-enrolled (another certificate) or retired since this connection opened:
                      // it may hear nothing more.
                      session.close(
                          Channel.CLOSE_REFUSED, "this certificate is no longer the machine's");
                      session.endDelivery();
                      return;
                    }
                    if (ar.succeeded()) {
                      for (Command command : ar.result()) {
                        session.send(command);
                        session.lastSentSeq = Math.max(session.lastSentSeq, command.seq());
                      }
                      finished.incrementAndGet();
                    } else if (!OUTAGE.ifTransient(ar.cause())) {
                      LOG.warn(
                          "Delivering commands to {} failed; the next notification retries",
                          session.machineId,
                          ar.cause());
                    }
                    if (session.endDelivery()) {
                      deliver(session);
                    }
                  });
        });
  }

  /** Deliveries that read the session's open commands and sent them (none, if they were held). */
  long finished() {
    return finished.get();
  }

  /**
   * The commands to send, or null if the certificate is no longer the machine's (or the machine is
   * retired).
   */
  private Future<List<Command>> frames(String machineId, String certSerial, long afterSeq) {
    return db.preparedQuery(
            "SELECT 1 FROM machines WHERE id = $1 AND cert_serial = $2 AND state <> 'retired'")
        .execute(Tuple.of(machineId, certSerial))
        .compose(
            current ->
                current.size() == 0 ? Future.succeededFuture(null) : pending(machineId, afterSeq));
  }

  private Future<List<Command>> pending(String machineId, long afterSeq) {
    return db.preparedQuery(
            """
            UPDATE commands SET status = 'delivered', delivered_at = coalesce(delivered_at, now())
            WHERE machine_id = $1 AND seq > $2 AND status IN ('queued', 'delivered')
              -- Being switched off (the standby tier): what was queued meanwhile waits for the power-on.
              AND NOT EXISTS (SELECT 1 FROM machines m WHERE m.id = $1 AND m.power_state = 'off')
            RETURNING id, seq, type, instance_id""")
        .execute(Tuple.of(machineId, afterSeq))
        .compose(
            rows -> {
              List<Row> commands = new ArrayList<>();
              rows.forEach(commands::add);
              commands.sort(Comparator.comparingLong(r -> r.getLong("seq")));
              List<String> joins =
                  commands.stream()
                      .filter(r -> CommandKind.JOIN.wire().equals(r.getString("type")))
                      .map(r -> r.getString("instance_id"))
                      .toList();
              return joinParams(joins)
                  .map(
                      params -> {
                        List<Command> frames = new ArrayList<>();
                        for (Row c : commands) {
                          CommandKind kind = CommandKind.fromWire(c.getString("type"));
                          String instanceId = c.getString("instance_id");
                          frames.add(
                              new Command(
                                  c.getString("id"),
                                  c.getLong("seq"),
                                  kind,
                                  instanceId,
                                  kind == CommandKind.JOIN
                                      ? params.get(instanceId)
                                      : CommandParams.none(kind)));
                        }
                        return frames;
                      });
            });
  }

  /**
   * What each joining instance needs ({@link JoinParams}): providerID, shape, its machine's labels,
   * the join with its token, or the user data.
   */
  private Future<Map<String, JoinParams>> joinParams(List<String> instanceIds) {
    if (instanceIds.isEmpty()) {
      return Future.succeededFuture(Map.of());
    }
    return db.preparedQuery(
            """
            SELECT i.id, i.launch_id, i.machine_id, i.shape, i.kubernetes, i.secrets,
                   m.labels AS machine_labels
            FROM instances i JOIN machines m ON m.id = i.machine_id WHERE i.id = ANY($1)""")
        .execute(Tuple.of(instanceIds.toArray(String[]::new)))
        .compose(
            rows -> {
              List<Row> list = new ArrayList<>();
              rows.forEach(list::add);
              return vertx.executeBlocking(
                  () -> {
                    Map<String, JoinParams> out = new HashMap<>();
                    for (Row r : list) {
                      out.put(r.getString("id"), params(r));
                    }
                    return out;
                  },
                  false);
            });
  }

  private JoinParams params(Row instance) throws Exception {
    JsonObject unsealed =
        instance.getBuffer("secrets") == null
            ? new JsonObject()
            : new JsonObject(
                new String(
                    secrets.open(
                        instance.getBuffer("secrets").getBytes(), instance.getString("launch_id")),
                    StandardCharsets.UTF_8));
    JsonObject kubernetes = instance.getJsonObject("kubernetes");
    return new JoinParams(
        Instance.providerId(instance.getString("machine_id")),
        instance.getString("shape"),
        Fields.stringMap(
            instance.getJsonObject("machine_labels"),
            "machineLabels"), // the join takes the topology labels
        kubernetes == null
            ? null
            : KubernetesJoin.fromJson(kubernetes)
                .withBootstrapToken(unsealed.getString("bootstrapToken")),
        unsealed.getString("userData"));
  }
}
