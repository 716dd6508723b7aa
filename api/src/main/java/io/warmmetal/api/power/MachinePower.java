package io.warmmetal.api.power;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.crypto.SecretBox;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.ErrorCode;
import io.warmmetal.api.ssh.SshAccess;
import io.warmmetal.api.ssh.SshKeys;
import io.warmmetal.api.ssh.SshRunner;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Each machine's power control: its settings (the BMC password sealed, bound to the machine), the
 * driver built from them, and switching — the one writer of {@code machine_power} and of {@code
 * machines.power_state}, the power the API last switched a machine to. Live observations run on a
 * worker pool of their own, rationed by {@link Observations}, so that a flood of them cannot hold
 * up a switch.
 */
public final class MachinePower {
  private final Vertx vertx;
  private final Pool db;
  private final SecretBox secrets;
  private final SshKeys keys;
  private final SshRunner ssh;
  private final Duration timeout;
  private final String sshOffCommand;
  private final WorkerExecutor workers;
  private final WorkerExecutor observers;
  private final Observations observations;

  /**
   * {@code observeMinInterval}: a repeat observation of a machine within it gets the last answer;
   * {@code observeWorkers}: the observation pool's threads, and the most observations under way at
   * once.
   */
  public MachinePower(
      Vertx vertx,
      Pool db,
      SecretBox secrets,
      SshKeys keys,
      SshRunner ssh,
      Duration timeout,
      String sshOffCommand,
      Duration observeMinInterval,
      int observeWorkers) {
    this.vertx = vertx;
    this.db = db;
    this.secrets = secrets;
    this.keys = keys;
    this.ssh = ssh;
    this.timeout = timeout;
    this.sshOffCommand = sshOffCommand;
    this.workers = SshRunner.outOfBandWorkers(vertx);
    this.observers =
        vertx.createSharedWorkerExecutor(
            "warmmetal-power-observe",
            observeWorkers,
            timeout.toMillis() * 2,
            TimeUnit.MILLISECONDS);
    this.observations = new Observations(observeMinInterval, observeWorkers);
  }

  /**
   * Sets (or with driver {@code none}, removes) a machine's power control from a validated request
   * body.
   */
  public Future<PowerView> configure(String machineId, JsonObject body) {
    // What was observed through the old settings says nothing about the new ones.
    return store(machineId, body)
        .onComplete(x -> observations.forget(machineId))
        .compose(x -> describe(machineId, false));
  }

  private Future<?> store(String machineId, JsonObject body) {
    if ("none".equals(body.getString("driver"))) {
      // Without power control nothing will switch it again: what it was last switched to no longer
      // says anything.
      return machine(machineId)
          .compose(
              m ->
                  db.withTransaction(
                      tx ->
                          tx.preparedQuery("DELETE FROM machine_power WHERE machine_id = $1")
                              .execute(Tuple.of(machineId))
                              .compose(
                                  x ->
                                      tx.preparedQuery(
                                              """
                      UPDATE machines SET power_state = NULL, power_changed_at = NULL WHERE id = $1""")
                                          .execute(Tuple.of(machineId)))));
    }
    PowerSettings settings;
    try {
      settings = PowerSettings.fromRequest(body);
    } catch (ApiError e) {
      return Future.failedFuture(e);
    }
    return machine(machineId)
        .compose(
            m -> {
              if ("ssh".equals(settings.driver()) && m.getString("ssh_host") == null) {
                throw ApiError.of(
                    ErrorCode.InvalidState,
                    "machine "
                        + machineId
                        + " has no SSH access on record (enroll"
                        + " it over SSH) for the ssh power driver");
              }
              return vertx.executeBlocking(
                  () ->
                      settings.password() == null
                          ? null
                          : secrets.seal(
                              settings.password().getBytes(StandardCharsets.UTF_8),
                              boundTo(machineId)),
                  false);
            })
        .compose(
            sealedPassword ->
                db.preparedQuery(
                        """
                INSERT INTO machine_power (machine_id, driver, address, port, username, secret, tls_pin, system_id,
                                           mac, wake_address, wake_port)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
                ON CONFLICT (machine_id) DO UPDATE SET driver = excluded.driver, address = excluded.address,
                  port = excluded.port, username = excluded.username, secret = excluded.secret,
                  tls_pin = excluded.tls_pin, system_id = excluded.system_id, mac = excluded.mac,
                  wake_address = excluded.wake_address, wake_port = excluded.wake_port, updated_at = now()""")
                    .execute(
                        Tuple.wrap(
                            new Object[] {
                              machineId,
                              settings.driver(),
                              settings.address(),
                              settings.port(),
                              settings.username(),
                              sealedPassword == null ? null : Buffer.buffer(sealedPassword),
                              settings.tlsPin(),
                              settings.systemId(),
                              settings.mac(),
                              settings.wakeAddress(),
                              settings.wakePort()
                            })));
  }

  /**
   * The machine's power settings and recorded state; with {@code observe}, what the driver sees now
   * (rationed).
   */
  public Future<PowerView> describe(String machineId, boolean observe) {
    return machine(machineId)
        .compose(
            m -> {
              PowerView view =
                  new PowerView(
                      machineId,
                      m.getString("power_state"),
                      m.getOffsetDateTime("power_changed_at"),
                      m.getString("driver") == null ? null : settings(m, null),
                      null);
              if (!observe || view.settings() == null) {
                return Future.succeededFuture(view);
              }
              return observations
                  .observe(
                      machineId, () -> driver(machineId, m, observers).compose(PowerDriver::status))
                  .map(view::withObservation);
            });
  }

  /**
   * A machine that was no longer idle in standby when the standby tier came to switch it off:
   * nothing done.
   */
  public static final class NoLongerIdle extends RuntimeException {
    NoLongerIdle(String machineId) {
      super("machine " + machineId + " is no longer idle in standby", null, false, false);
    }
  }

  /**
   * Switches the machine on or off now and records it. Off is recorded first, in one statement that
   * also checks the machine may go off — so no launch can claim it while the switch is under way
   * without its commands waiting for the power to come back (delivery holds commands of a machine
   * recorded off). {@code manual}: an operator's request, refused (409) for a machine carrying an
   * instance; otherwise (the standby tier) only an idle, uncordoned standby machine is switched
   * off, else {@link NoLongerIdle}.
   */
  public Future<PowerView> switchTo(
      String machineId, PowerState state, String reason, boolean manual) {
    return machine(machineId)
        .compose(
            m -> {
              if (m.getString("driver") == null) {
                throw ApiError.of(
                    ErrorCode.InvalidState, "machine " + machineId + " has no power control");
              }
              return driver(machineId, m, workers);
            })
        .compose(
            driver ->
                state == PowerState.ON
                    ? remote(machineId, state, driver.on())
                        .compose(x -> record(machineId, "on", reason))
                    : switchOff(machineId, driver, reason, manual))
        .onComplete(x -> observations.forget(machineId))
        .compose(x -> describe(machineId, false));
  }

  private Future<Void> switchOff(
      String machineId, PowerDriver driver, String reason, boolean manual) {
    return db.preparedQuery(
            """
            WITH prev AS (SELECT power_state FROM machines WHERE id = $1 FOR UPDATE)
            UPDATE machines SET power_state = 'off', power_changed_at = now()
            WHERE id = $1 AND instance_id IS NULL AND ($2 OR (state = 'standby' AND NOT cordoned))
            RETURNING (SELECT power_state FROM prev) AS previous""")
        .execute(Tuple.of(machineId, manual))
        .compose(
            rows -> {
              if (rows.size() == 0) {
                return Future.failedFuture(
                    manual
                        ? ApiError.of(
                            ErrorCode.InvalidState,
                            "machine "
                                + machineId
                                + " carries an instance (running, or terminated with its reset not reported yet); switch it off"
                                + " once it is free")
                        : new NoLongerIdle(machineId));
              }
              String previous = rows.iterator().next().getString("previous");
              return remote(machineId, PowerState.OFF, driver.off())
                  .recover(
                      err ->
                          db.preparedQuery(
                                  """
                      UPDATE machines SET power_state = $2, power_changed_at = now()
                      WHERE id = $1 AND power_state = 'off'""")
                              .execute(Tuple.of(machineId, previous))
                              .transform(x -> Future.<Void>failedFuture(err)))
                  .compose(x -> event(machineId, "off", reason));
            });
  }

  private static <T> Future<T> remote(String machineId, PowerState state, Future<T> call) {
    return call.recover(
        err ->
            Future.failedFuture(
                new ApiError(
                    ErrorCode.RemoteFailure,
                    "switching machine "
                        + machineId
                        + " "
                        + state.name().toLowerCase()
                        + " failed: "
                        + err.getMessage(),
                    null,
                    null)));
  }

  private Future<Void> record(String machineId, String state, String reason) {
    return db.preparedQuery(
            "UPDATE machines SET power_state = $2, power_changed_at = now() WHERE id = $1")
        .execute(Tuple.of(machineId, state))
        .compose(x -> event(machineId, state, reason));
  }

  private Future<Void> event(String machineId, String state, String reason) {
    return db.preparedQuery(
            """
            INSERT INTO events (type, subject, machine_id, to_state, reason) VALUES ('MachinePower', $1, $1, $2, $3)""")
        .execute(Tuple.of(machineId, state, reason))
        .mapEmpty();
  }

  /**
   * The driver for the machine's settings row ({@link #machine}), its secret opened on a worker
   * thread; blocking BMC calls (ipmitool) run on {@code pool}.
   */
  private Future<PowerDriver> driver(String machineId, Row m, WorkerExecutor pool) {
    Buffer sealed = m.getBuffer("secret");
    Future<String> password =
        sealed == null
            ? Future.succeededFuture()
            : vertx.executeBlocking(
                () ->
                    new String(
                        secrets.open(sealed.getBytes(), boundTo(machineId)),
                        StandardCharsets.UTF_8),
                false);
    return password.compose(
        secret -> {
          PowerSettings s = settings(m, secret);
          return switch (s.driver()) {
            case "ipmi" -> Future.succeededFuture(PowerDriver.ipmi(pool, s.ipmi(), timeout));
            case "redfish" ->
                Future.succeededFuture(PowerDriver.redfish(vertx, s.redfish(), timeout));
            default ->
                keys.target(
                        db,
                        new SshAccess(
                            m.getString("ssh_host"),
                            m.getInteger("ssh_port"),
                            m.getString("ssh_user"),
                            m.getString("ssh_key"),
                            m.getString("ssh_host_key")),
                        "machineId")
                    .map(
                        target ->
                            PowerDriver.ssh(
                                vertx,
                                ssh,
                                target,
                                sshOffCommand,
                                s.mac(),
                                s.wakeAddress(),
                                s.wakePort(),
                                timeout));
          };
        });
  }

  private Future<Row> machine(String machineId) {
    return db.preparedQuery(
            """
            SELECT m.instance_id, m.power_state, m.power_changed_at, p.*,
                   s.host AS ssh_host, s.port AS ssh_port, s.username AS ssh_user, s.key_id AS ssh_key,
                   s.host_key_fingerprint AS ssh_host_key
            FROM machines m
            LEFT JOIN machine_power p ON p.machine_id = m.id
            LEFT JOIN machine_ssh s ON s.machine_id = m.id
            WHERE m.id = $1""")
        .execute(Tuple.of(machineId))
        .map(
            rows -> {
              if (rows.size() == 0) {
                throw ApiError.notFound("machine", machineId);
              }
              return rows.iterator().next();
            });
  }

  private static PowerSettings settings(Row r, String password) {
    return new PowerSettings(
        r.getString("driver"),
        r.getString("address"),
        r.getInteger("port"),
        r.getString("username"),
        r.getBuffer("secret") == null ? null : password == null ? "" : password,
        r.getString("tls_pin"),
        r.getString("system_id"),
        r.getString("mac"),
        r.getString("wake_address"),
        r.getInteger("wake_port"));
  }

  private static String boundTo(String machineId) {
    return "power:" + machineId;
  }
}
