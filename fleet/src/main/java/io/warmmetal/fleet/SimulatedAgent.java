package io.warmmetal.fleet;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.json.JsonObject;
import io.warmmetal.agent.channel.ChannelClient;
import io.warmmetal.agent.commands.CommandLog;
import io.warmmetal.agent.commands.Executor;
import io.warmmetal.agent.enrollment.AgentIdentity;
import io.warmmetal.agent.enrollment.Enrollment;
import java.net.URI;
import java.nio.file.Path;

/**
 * One simulated server: the real enrollment and the real channel, with an executor that does not
 * touch the host. Many of them share a Vert.x instance, an enrollment client and a WebSocket
 * client, each with its own key, certificate, state directory and connection.
 */
public final class SimulatedAgent {
  private final AgentIdentity identity;
  private final ChannelClient channel;

  private SimulatedAgent(AgentIdentity identity, ChannelClient channel) {
    this.identity = identity;
    this.channel = channel;
  }

  /**
   * Enrolls (unless {@code stateDir} already holds an identity) and connects.
   *
   * @param machine name, facts and identity this simulated server reports
   */
  public static Future<SimulatedAgent> start(
      Vertx vertx,
      Enrollment enrollment,
      WebSocketClient ws,
      URI api,
      String token,
      JsonObject machine,
      Path stateDir,
      Executor executor) {
    return vertx
        .executeBlocking(() -> AgentIdentity.load(stateDir), false)
        .compose(
            known ->
                known.isPresent()
                    ? Future.succeededFuture(known.get())
                    : enrollment
                        .enroll(token, machine)
                        .compose(
                            id ->
                                vertx.executeBlocking(
                                    () -> {
                                      id.save(stateDir);
                                      return id;
                                    },
                                    false)))
        .compose(
            identity ->
                vertx
                    .executeBlocking(() -> CommandLog.load(vertx, stateDir), false)
                    .map(
                        log -> {
                          ChannelClient channel =
                              new ChannelClient(vertx, ws, api, identity, log, executor);
                          channel.start();
                          return new SimulatedAgent(identity, channel);
                        }));
  }

  public String machineId() {
    return identity.machineId();
  }

  public AgentIdentity identity() {
    return identity;
  }

  public boolean connected() {
    return channel.connected();
  }

  /** Disconnects for good (as a stopped agent would). */
  public Future<Void> stop() {
    return channel.stop();
  }
}
