package io.warmmetal.api.auth;

import java.util.EnumSet;
import java.util.Set;

/** A token's role and the permissions it grants. */
public enum Role {
  ADMIN("admin", EnumSet.allOf(Permission.class)),
  CLIENT("client", EnumSet.of(Permission.LAUNCH, Permission.TERMINATE, Permission.READ)),
  READ_ONLY("read-only", EnumSet.of(Permission.READ)),
  /** An operator's view: reads the whole fleet and every project, changes nothing. */
  FLEET_READER("fleet-reader", EnumSet.of(Permission.READ, Permission.FLEET_READ)),
  /** For DHCP/iPXE configuration: boot scripts only. */
  BOOT("boot", EnumSet.of(Permission.BOOT));

  private final String wireName;
  private final Set<Permission> grants;

  Role(String wireName, Set<Permission> grants) {
    this.wireName = wireName;
    this.grants = grants;
  }

  public String wireName() {
    return wireName;
  }

  public boolean grants(Permission p) {
    return grants.contains(p);
  }

  /** Whether its tokens see and act in every project (the others are held to their own). */
  public boolean acrossProjects() {
    return grants.contains(Permission.FLEET_READ);
  }

  public static Role fromWire(String name) {
    for (Role r : values()) {
      if (r.wireName.equals(name)) {
        return r;
      }
    }
    throw new IllegalArgumentException("unknown role '" + name + "'");
  }
}
