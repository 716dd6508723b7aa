package io.warmmetal.api.ec2;

import io.vertx.sqlclient.Row;
import io.warmmetal.api.lifecycle.Instance;
import io.warmmetal.api.lifecycle.InstanceState;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;

/**
 * An instance as EC2 describes it: WarmMetal's instance with what EC2 shows beside it (its launch's
 * client token, the machine's zone and architecture, whether the machine's agent is heard).
 */
record Ec2Instance(
    Instance instance, String clientToken, String zone, String arch, boolean machineOnline) {

  /**
   * What {@link #from} reads; {@code $1} is the zone label. Terminated instances stay visible for
   * an hour, as EC2's do.
   */
  static final String SELECT =
      """
      SELECT i.*, m.address, m.labels ->> $1 AS zone, m.state <> 'offline' AS machine_online,
             m.facts ->> 'arch' AS arch, l.client_token
      FROM instances i JOIN machines m ON m.id = i.machine_id JOIN launches l ON l.id = i.launch_id
      """;

  static final String STILL_VISIBLE =
      "(i.state NOT IN ('terminated', 'failed')"
          + " OR coalesce(i.terminated_at, i.created_at) > now() - interval '1 hour')";

  static Ec2Instance from(Row r) {
    return new Ec2Instance(
        Instance.from(r),
        r.getString("client_token"),
        r.getString("zone"),
        architecture(r.getString("arch")),
        Boolean.TRUE.equals(r.getBoolean("machine_online")));
  }

  /** EC2's architecture names ({@code x86_64}, {@code arm64}) for a shape's or a machine's. */
  static String architecture(String arch) {
    return switch (arch == null ? "" : arch) {
      case "x86", "x86_64", "amd64" -> "x86_64";
      case "arm", "aarch64", "arm64" -> "arm64";
      default -> arch;
    };
  }

  /** EC2's state code and name: a failed instance is a terminated one, as a failed launch is. */
  static int stateCode(InstanceState state) {
    return switch (state) {
      case PENDING -> 0;
      case RUNNING -> 16;
      case SHUTTING_DOWN -> 32;
      case TERMINATED, FAILED -> 48;
    };
  }

  static String stateName(InstanceState state) {
    return state == InstanceState.FAILED ? "terminated" : state.wire();
  }

  /** {@code <instanceState><code>16</code><name>running</name></instanceState>}, named so. */
  static void state(Xml xml, String element, InstanceState state) {
    xml.open(element).text("code", stateCode(state)).text("name", stateName(state)).close();
  }

  /** EC2's timestamps: UTC, milliseconds, {@code Z}. */
  static String time(OffsetDateTime t) {
    return t == null
        ? null
        : DateTimeFormatter.ISO_INSTANT.format(
            t.withOffsetSameInstant(ZoneOffset.UTC).truncatedTo(ChronoUnit.MILLIS).toInstant());
  }

  /** One {@code instancesSet} item, as RunInstances and DescribeInstances answer it. */
  void write(Xml xml, int launchIndex) {
    Instance i = instance;
    xml.text("instanceId", i.id());
    state(xml, "instanceState", i.state());
    xml.text("privateDnsName", "");
    xml.text("dnsName", "");
    if (i.state() == InstanceState.FAILED || i.stateReason() != null) {
      xml.text("reason", i.stateReason() == null ? "" : i.stateReason());
    }
    xml.text("amiLaunchIndex", launchIndex);
    xml.text("instanceType", i.shape());
    xml.text("launchTime", time(i.createdAt()));
    xml.open("placement");
    xml.text("availabilityZone", zone);
    xml.text("tenancy", "default");
    xml.close();
    xml.open("monitoring").text("state", "disabled").close();
    xml.text("privateIpAddress", i.address());
    xml.text("clientToken", clientToken);
    xml.set(
        "tagSet",
        i.labels().fieldNames(),
        key -> xml.text("key", key).text("value", i.labels().getValue(key)));
    xml.text("architecture", arch);
    // A server boots its image over the network into memory: no EBS root, no hypervisor.
    xml.text("rootDeviceType", "instance-store");
    xml.text("virtualizationType", "hvm");
    if (i.state() == InstanceState.FAILED) {
      xml.open("stateReason")
          .text("code", "Server.InternalError")
          .text("message", "Server.InternalError: " + i.stateReason())
          .close();
    }
  }
}
