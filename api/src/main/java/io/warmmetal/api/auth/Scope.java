package io.warmmetal.api.auth;

import io.vertx.core.Future;
import io.vertx.ext.web.RoutingContext;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.ErrorCode;
import io.warmmetal.api.lifecycle.Caller;
import java.util.regex.Pattern;

/**
 * The project a request acts in. A project's tokens act in their own project only. Tokens whose
 * role reaches across projects (admin, fleet-reader) see every project unless they name one in the
 * {@code WarmMetal-Project} header, and launch into the one they name, or else their own.
 *
 * @param project what the request may see and change: one project, or null for every project
 * @param home where what it creates goes (never null)
 * @param operator the token's role reaches across projects: it also sees what a project's quota
 *     closes to the project's own tokens (a shape with {@code maxInstances} 0)
 */
public record Scope(String project, String home, boolean operator) {
  public static final String HEADER = "WarmMetal-Project";
  private static final Pattern NAME = Pattern.compile("[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?");

  /** The scope of an authenticated request; a project another token named must exist. */
  public static Future<Scope> of(RoutingContext ctx, Pool db) {
    return of(AuthHandler.principal(ctx), ctx.request().getHeader(HEADER), db);
  }

  /**
   * The scope of {@code principal}, acting in the project {@code named} (the {@value #HEADER}
   * header; null for its own).
   */
  public static Future<Scope> of(Principal principal, String named, Pool db) {
    if (named == null || named.isEmpty()) {
      return Future.succeededFuture(
          principal.role().acrossProjects()
              ? new Scope(null, principal.project(), true)
              : new Scope(principal.project(), principal.project(), false));
    }
    if (!NAME.matcher(named).matches()) {
      return Future.failedFuture(
          ApiError.invalid(
              HEADER,
              HEADER
                  + " must be a project name (lowercase letters,"
                  + " digits and '-', at most 63)"));
    }
    if (named.equals(principal.project())) {
      return Future.succeededFuture(new Scope(named, named, principal.role().acrossProjects()));
    }
    if (!principal.role().acrossProjects()) {
      return Future.failedFuture(
          ApiError.of(
              ErrorCode.Forbidden,
              "this token belongs to project '"
                  + principal.project()
                  + "'; only admin and fleet-reader tokens act in other projects"));
    }
    return db.preparedQuery("SELECT 1 FROM projects WHERE name = $1")
        .execute(Tuple.of(named))
        .map(
            rows -> {
              if (rows.size() == 0) {
                // The header names it: a client can tell this from a path's project that does not
                // exist.
                throw new ApiError(
                    ErrorCode.NotFound, "project " + named + " does not exist", HEADER, null);
              }
              return new Scope(named, named, true);
            });
  }

  /** The request's caller, acting in this scope. */
  public static Caller caller(RoutingContext ctx, Scope scope) {
    return scope.caller(AuthHandler.principal(ctx));
  }

  /** The request's caller creating something: it lands in {@link #home}. */
  public static Caller creator(RoutingContext ctx, Scope scope) {
    return scope.creator(AuthHandler.principal(ctx));
  }

  /** {@code p} acting in this scope. */
  public Caller caller(Principal p) {
    return new Caller(p.tokenId(), p.name(), project, operator);
  }

  /** {@code p} creating something in this scope: it lands in {@link #home}. */
  public Caller creator(Principal p) {
    return new Caller(p.tokenId(), p.name(), home, operator);
  }
}
