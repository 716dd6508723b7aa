package io.warmmetal.api.ssh;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.crypto.Redaction;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.ErrorCode;
import java.util.List;

/**
 * Recovering a machine whose agent does not answer, over the SSH access it was enrolled with:
 * restart the agent, run the agent's reset script (leave the cluster, wipe per policy, prepare) and
 * then restart it, or reboot the server. A reset or reboot is refused for a machine a launch could
 * claim meanwhile (warm, preparing, standby …) unless it is cordoned: only offline, failed or
 * enrolling ones go without. Refused for a machine carrying an instance (a reboot would take the
 * node down under its pods), but for restarting the agent of one resetting after its instance was
 * terminated (that reset waits for the agent). The outcome, output redacted, is an event on the
 * machine.
 */
public final class Recovery {
  public static final List<String> ACTIONS = List.of("restart-agent", "reset", "reboot");

  private final Pool db;
  private final SshKeys keys;
  private final AgentInstaller installer;
  private final String rebootCommand;

  public Recovery(Pool db, SshKeys keys, AgentInstaller installer, String rebootCommand) {
    this.db = db;
    this.keys = keys;
    this.installer = installer;
    this.rebootCommand = rebootCommand;
  }

  public Future<JsonObject> recover(String machineId, String action) {
    return db.preparedQuery(
            """
            SELECT m.state, m.cordoned, m.instance_id, s.host, s.port, s.username, s.key_id, s.host_key_fingerprint
            FROM machines m LEFT JOIN machine_ssh s ON s.machine_id = m.id WHERE m.id = $1""")
        .execute(Tuple.of(machineId))
        .compose(
            rows -> {
              if (rows.size() == 0) {
                throw ApiError.notFound("machine", machineId);
              }
              Row m = rows.iterator().next();
              if ("retired".equals(m.getString("state"))) {
                throw ApiError.of(ErrorCode.InvalidState, "machine " + machineId + " is retired");
              }
              boolean resetPending = "resetting".equals(m.getString("state"));
              if (m.getString("instance_id") != null
                  && !(resetPending && action.equals("restart-agent"))) {
                // Resetting: the instance is terminated already, and a restarted agent takes up (or
                // reports) its reset.
                throw ApiError.of(
                    ErrorCode.InvalidState,
                    "machine "
                        + machineId
                        + (resetPending
                            ? " is resetting after instance "
                                + m.getString("instance_id")
                                + " was terminated; only "
                                + "restart-agent recovers it until the reset is reported"
                            : " carries instance "
                                + m.getString("instance_id")
                                + "; terminate it before recovering the machine"));
              }
              if (!action.equals("restart-agent")
                  && !m.getBoolean("cordoned")
                  && !List.of("offline", "failed", "enrolling").contains(m.getString("state"))) {
                // A launch could claim it while it reboots or wipes: only machines no launch takes,
                // or cordoned ones.
                throw ApiError.of(
                    ErrorCode.InvalidState,
                    "machine "
                        + machineId
                        + " is "
                        + m.getString("state")
                        + " and may be claimed meanwhile; cordon it before a "
                        + action);
              }
              if (m.getString("host") == null) {
                throw ApiError.of(
                    ErrorCode.InvalidState,
                    "machine "
                        + machineId
                        + " has no SSH access on record (it was not enrolled over SSH)");
              }
              return keys.target(db, SshAccess.of(m), "machineId");
            })
        .compose(
            target ->
                (switch (action) {
                      case "reboot" -> installer.run(target, rebootDetached());
                      case "reset" -> installer.reset(target);
                      default -> installer.restart(target);
                    })
                    .recover(
                        err ->
                            Future.failedFuture(
                                new ApiError(
                                    ErrorCode.RemoteFailure,
                                    "could not "
                                        + action
                                        + " machine "
                                        + machineId
                                        + " over SSH: "
                                        + err.getMessage(),
                                    null,
                                    null))))
        .compose(result -> record(machineId, action, result));
  }

  /** The reboot, detached so that the SSH session ends cleanly before the server goes down. */
  private String rebootDetached() {
    return "nohup sh -c "
        + Shell.quote("sleep 1; " + rebootCommand)
        + " >/dev/null 2>&1 </dev/null &\n"
        + "echo 'reboot scheduled'";
  }

  private Future<JsonObject> record(String machineId, String action, SshResult result) {
    String output = Redaction.redact(result.stdout() + result.stderr(), List.of());
    JsonObject details = result.toJson(output).put("action", action);
    return db.preparedQuery(
            """
            INSERT INTO events (type, subject, machine_id, reason, details)
            VALUES ('MachineRecovery', $1, $1, $2, $3)""")
        .execute(Tuple.of(machineId, action + (result.succeeded() ? " done" : " failed"), details))
        .map(x -> details.put("machineId", machineId).put("succeeded", result.succeeded()));
  }
}
