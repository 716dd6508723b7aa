package io.warmmetal.api.power;

import io.vertx.core.json.JsonObject;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.protocol.CaPin;

/**
 * How one machine's power is switched: by its BMC ({@code ipmi}, {@code redfish}), or by its
 * operating system over SSH with Wake-on-LAN to start it again ({@code ssh}). {@code password} is a
 * secret: never in {@link #toJson} or {@link #toString}.
 */
public record PowerSettings(
    String driver,
    String address,
    Integer port,
    String username,
    String password,
    String tlsPin,
    String systemId,
    String mac,
    String wakeAddress,
    Integer wakePort) {

  /**
   * From a validated request body; 400 naming the field a driver needs and did not get, or one it
   * cannot use ({@link DriverLimits}).
   */
  public static PowerSettings fromRequest(JsonObject body) {
    PowerSettings settings = parse(body);
    DriverLimits.check(settings);
    return settings;
  }

  private static PowerSettings parse(JsonObject body) {
    String driver = body.getString("driver");
    return switch (driver) {
      case "ipmi" ->
          new PowerSettings(
              driver,
              required(body, "address"),
              body.getInteger("port", 623),
              required(body, "username"),
              required(body, "password"),
              null,
              null,
              null,
              null,
              null);
      case "redfish" ->
          new PowerSettings(
              driver,
              required(body, "address"),
              body.getInteger("port", 443),
              required(body, "username"),
              required(body, "password"),
              pin(required(body, "tlsPin")),
              body.getString("systemId", "1"),
              null,
              null,
              null);
      case "ssh" -> {
        String mac = required(body, "mac");
        try {
          WakeOnLan.packet(mac);
        } catch (IllegalArgumentException e) {
          throw ApiError.invalid("mac", e.getMessage());
        }
        yield new PowerSettings(
            driver,
            null,
            null,
            null,
            null,
            null,
            null,
            mac,
            body.getString("wakeAddress", "255.255.255.255"),
            body.getInteger("wakePort", 9));
      }
      default -> throw ApiError.invalid("driver", "unknown power driver " + driver);
    };
  }

  private static String required(JsonObject body, String field) {
    String value = body.getString(field);
    if (value == null || value.isBlank()) {
      throw ApiError.invalid(field, "the " + body.getString("driver") + " driver needs " + field);
    }
    return value;
  }

  private static String pin(String value) {
    try {
      return new CaPin(value).value();
    } catch (IllegalArgumentException e) {
      throw ApiError.invalid(
          "tlsPin",
          "expected sha256:<64 hex digits> (the SHA-256 of the public key of the BMC's "
              + "certificate or of its CA)");
    }
  }

  public IpmiTarget ipmi() {
    return new IpmiTarget(address, port, username, password);
  }

  public RedfishTarget redfish() {
    return new RedfishTarget(address, port, username, password, new CaPin(tlsPin), systemId);
  }

  /** The settings without the password (whether one is held is said instead). */
  public JsonObject toJson() {
    JsonObject json = new JsonObject().put("driver", driver);
    if (address != null) {
      json.put("address", address)
          .put("port", port)
          .put("username", username)
          .put("hasPassword", password != null);
    }
    if (tlsPin != null) {
      json.put("tlsPin", tlsPin).put("systemId", systemId);
    }
    if (mac != null) {
      json.put("mac", mac).put("wakeAddress", wakeAddress).put("wakePort", wakePort);
    }
    return json;
  }

  @Override
  public String toString() {
    return toJson().encode();
  }
}
