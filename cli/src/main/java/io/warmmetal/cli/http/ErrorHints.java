package io.warmmetal.cli.http;

import java.util.Map;

/**
 * What to do next about an API error, where the error alone does not say: the command that helps,
 * by name.
 */
public final class ErrorHints {
  /**
   * The header a request names its project in; a 404 blaming it means that project does not exist.
   */
  static final String PROJECT_HEADER = "WarmMetal-Project";

  /** A resource's path segment → its name and how to see the ones that exist. */
  private static final Map<String, String[]> RESOURCES =
      Map.of(
          "instances",
              new String[] {
                "instance",
                "`warmmetal instances ls` lists the project's instances (another "
                    + "project's: name it with --project)"
              },
          "machines", new String[] {"machine", "`warmmetal machines ls` lists them"},
          "shapes", new String[] {"shape", null},
          "tokens", new String[] {"token", "`warmmetal tokens ls` lists them"},
          "enrollment-tokens",
              new String[] {"enrollment token", "`warmmetal enrollment-tokens ls` lists them"},
          "commands",
              new String[] {
                "command", "`warmmetal machines commands MACHINE` lists a machine's commands"
              },
          "hardware", new String[] {"hardware record", "`warmmetal hardware ls` lists them"});

  private ErrorHints() {}

  /** A hint for the error, or null. */
  public static String hint(ApiException e) {
    if (e.hint() != null) {
      return e.hint();
    }
    return switch (e.status()) {
      case 400 -> "shape".equals(e.field()) ? shapes() : null;
      case 401 -> "check WARMMETAL_TOKEN or `warmmetal config set token`";
      case 403 ->
          "QuotaExceeded".equals(e.code())
              ? "the project's quota is full: `warmmetal projects get` shows what is in use"
              : "the token's role does not allow this, or the project named is not the token's (see docs/tenancy.md)";
      case 404 -> PROJECT_HEADER.equals(e.field()) ? noProject(e.project(), true) : notFound(e);
      case 409 ->
          "IdempotentParameterMismatch".equals(e.code())
              ? "that client token was used with other parameters: give a new --client-token"
              : null;
      case 429, 503 ->
          "retry after "
              + (e.retryAfter() == null ? "a few" : e.retryAfter())
              + " seconds (Retry-After)";
      default -> null;
    };
  }

  /** {@code /v1/instances/i-…} → "no instance i-… …: `warmmetal instances ls` lists …". */
  static String notFound(ApiException e) {
    String[] parts = e.path().split("\\?")[0].split("/");
    if (parts.length < 4) {
      return null;
    }
    String id = parts[3];
    return switch (parts[2]) {
      case "projects" -> noProject(id, false);
      case "shapes" -> "no shape " + id + ": " + shapes();
      // A pool is a shape's target: the shape may be missing, or only its target.
      case "pools" ->
          e.getMessage().startsWith("shape ")
              ? "no shape " + id + ": " + shapes()
              : "shape "
                  + id
                  + " has no warm-pool target yet: `warmmetal pools set "
                  + id
                  + " --min-warm N --max-warm M` sets one";
      default -> {
        String[] resource = RESOURCES.get(parts[2]);
        yield resource == null ? null : "no " + resource[0] + " " + id + ": " + resource[1];
      }
    };
  }

  private static String shapes() {
    return "`warmmetal shapes ls` lists the shapes (a shape exists once a machine with its hardware is registered "
        + "or enrolled)";
  }

  /** A project that does not exist: who creates it, and how to name another. */
  private static String noProject(String project, boolean named) {
    String name = project == null ? "PROJECT" : project;
    return "project "
        + name
        + " does not exist: create it with `warmmetal projects set "
        + name
        + "` (an admin's token; `--quota SHAPE=N` caps its instances)"
        + (named ? ", or name another with --project or WARMMETAL_PROJECT" : "")
        + "; `warmmetal projects ls` lists them";
  }
}
