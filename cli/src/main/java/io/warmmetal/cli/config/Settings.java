package io.warmmetal.cli.config;

import java.util.Map;

/** Where and as whom to call the API: flags over environment over the config file. */
public record Settings(String api, String token, String project, String caFile) {

  /** The values given as flags (null where not given). */
  public record Flags(String api, String token, String project, String caFile) {}

  public static Settings resolve(Flags flags, Map<String, String> env, Map<String, String> file) {
    return new Settings(
        pick(flags.api(), env.get("WARMMETAL_API"), file.get("api")),
        pick(flags.token(), env.get("WARMMETAL_TOKEN"), file.get("token")),
        pick(flags.project(), env.get("WARMMETAL_PROJECT"), file.get("project")),
        pick(flags.caFile(), env.get("WARMMETAL_CA_FILE"), file.get("ca-file")));
  }

  private static String pick(String... values) {
    for (String v : values) {
      if (v != null && !v.isBlank()) {
        return v.strip();
      }
    }
    return null;
  }

  /** Never the token itself: this is printed by {@code config view}. */
  @Override
  public String toString() {
    return "Settings[api="
        + api
        + ", token="
        + (token == null ? "unset" : "set")
        + ", project="
        + project
        + ", caFile="
        + caFile
        + "]";
  }
}
