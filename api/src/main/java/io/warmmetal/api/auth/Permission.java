package io.warmmetal.api.auth;

/**
 * What an operation needs; declared per operation in openapi.yaml as {@code
 * x-warmmetal-permission}.
 */
public enum Permission {
  READ("read"),
  FLEET_READ("fleet-read"),
  LAUNCH("launch"),
  TERMINATE("terminate"),
  BOOT("boot"),
  ADMIN("admin"),
  /**
   * Reaching a machine's BMC or host to look (a live power observation) and seeing how it is
   * reached (BMC address, username, endpoints). Separate from {@link #READ}: a live look costs a
   * BMC session.
   */
  OUT_OF_BAND("out-of-band"),
  /** No credentials needed (public artifacts, like the boot image's files). */
  NONE("none");

  private final String wireName;

  Permission(String wireName) {
    this.wireName = wireName;
  }

  public String wireName() {
    return wireName;
  }

  public static Permission fromWire(String name) {
    for (Permission p : values()) {
      if (p.wireName.equals(name)) {
        return p;
      }
    }
    throw new IllegalArgumentException("unknown permission '" + name + "'");
  }
}
