package io.warmmetal.cli.machines;

import com.fasterxml.jackson.databind.JsonNode;
import io.warmmetal.cli.http.ApiClient;
import io.warmmetal.cli.http.ApiException;
import java.util.function.Supplier;

/**
 * A machine resetting after its instance was terminated, its reset not yet reported: the API
 * refuses to retire, reboot or switch it off, and terminating the instance again changes nothing.
 * The refusal gets the ways on as its hint: wait for the agent, restart it, or report the reset for
 * it.
 */
final class ResetPending {
  private ResetPending() {}

  /**
   * Runs a call on the machine; an {@code InvalidState} refusal of a machine whose reset waits gets
   * the hint.
   */
  static JsonNode explained(ApiClient api, String machineId, Supplier<JsonNode> call) {
    try {
      return call.get();
    } catch (ApiException e) {
      if (e.status() != 409 || !"InvalidState".equals(e.code())) {
        throw e;
      }
      JsonNode machine;
      try {
        machine = api.get("/v1/machines/" + machineId);
      } catch (RuntimeException lookup) {
        throw e; // the refusal is what the user asked about; the look-up was only for a better hint
      }
      if (!"resetting".equals(machine.path("state").asText())
          || !machine.hasNonNull("instanceId")) {
        throw e;
      }
      // Recovering over SSH is a way on only for a machine that has SSH access.
      boolean overSsh = !e.getMessage().contains("no SSH access");
      throw e.withHint(hint(machineId, machine.get("instanceId").asText(), overSsh));
    }
  }

  static String hint(String machineId, String instanceId, boolean overSsh) {
    return "instance "
        + instanceId
        + " is terminated already; the machine's reset waits for its agent to report it."
        + "\nWait for the agent: `warmmetal events --machine "
        + machineId
        + " --follow` shows the report."
        + (overSsh
            ? "\nThe agent is stuck: `warmmetal machines recover "
                + machineId
                + "` restarts it over SSH (a "
                + "machine enrolled over SSH)."
            : "")
        + "\nThe agent is gone, or you reset the host by hand: `warmmetal machines report "
        + machineId
        + " --status succeeded` (it is prepared again), or `--status failed` (quarantined; then `warmmetal machines "
        + "retire "
        + machineId
        + "`).";
  }
}
