package io.warmmetal.api.auth;

import io.vertx.core.Handler;
import io.vertx.ext.web.RoutingContext;
import io.vertx.openapi.contract.OpenAPIContract;
import io.vertx.openapi.contract.Operation;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.ErrorCode;
import io.warmmetal.api.http.ErrorResponses;
import java.util.HashMap;
import java.util.Map;

/**
 * Authenticates the bearer token and checks the operation's {@code x-warmmetal-permission} before the request is
 * validated, so an unauthenticated caller learns nothing about the contract (401, then 403, then 400).
 */
public final class AuthHandler implements Handler<RoutingContext> {
  public static final String PERMISSION_EXTENSION = "x-warmmetal-permission";
  private static final String PRINCIPAL = "warmmetal.principal";

  private final OpenAPIContract contract;
  private final TokenStore tokens;
  private final Map<String, Permission> permissions = new HashMap<>();

  public AuthHandler(OpenAPIContract contract, TokenStore tokens) {
    this.contract = contract;
    this.tokens = tokens;
    for (Operation op : contract.operations()) {
      Object p = op.getExtensions().get(PERMISSION_EXTENSION);
      if (p == null) {
        throw new IllegalStateException("operation " + op.getOperationId() + " declares no " + PERMISSION_EXTENSION);
      }
      permissions.put(op.getOperationId(), Permission.fromWire(p.toString()));
    }
  }

  public static Principal principal(RoutingContext ctx) {
    return ctx.get(PRINCIPAL);
  }

  @Override
  public void handle(RoutingContext ctx) {
    // The path as the router will match it (dot segments resolved, escapes of unreserved characters decoded,
    // repeated and trailing slashes dropped): a spelling the contract lookup missed must not skip the check.
    String path = canonical(ctx.normalizedPath());
    if (!path.equals("/v1") && !path.startsWith("/v1/")) {
      ctx.next(); // health, metrics, or a 404 for the router to answer
      return;
    }
    Operation op = contract.findOperation(path, ctx.request().method());
    Permission needed = op == null ? null : permissions.get(op.getOperationId());
    if (needed == Permission.NONE) {
      ctx.next();
      return;
    }
    // Basic credentials only where iPXE needs them (boot scripts): a browser's cached Basic login must not be
    // enough for anything else.
    boolean basicAllowed = needed == Permission.BOOT;
    String token = token(ctx.request().getHeader("Authorization"), basicAllowed);
    if (token == null) {
      deny(ctx, ApiError.of(ErrorCode.Unauthorized, "send an API token as 'Authorization: Bearer <token>'"),
          basicAllowed);
      return;
    }
    tokens.authenticate(token).onComplete(ar -> {
      if (ar.failed()) {
        ctx.fail(ar.cause());
      } else if (ar.result().isEmpty()) {
        deny(ctx, ApiError.of(ErrorCode.Unauthorized, "the API token is unknown or revoked"), basicAllowed);
      } else if (needed != null && !ar.result().get().role().grants(needed)) {
        deny(ctx, forbidden(ar.result().get(), needed, op.getOperationId()), false);
      } else {
        // No operation matched (needed == null): the router answers 404 or 405, and should it route the request
        // to an operation after all, that operation's guard checks the permission.
        ctx.put(PRINCIPAL, ar.result().get());
        ctx.next();
      }
    });
  }

  /**
   * The check again, on the operation's own route, with the principal the root handler authenticated: should the
   * router ever reach an operation the contract lookup did not find, it still fails closed.
   */
  public Handler<RoutingContext> guard(String operationId) {
    Permission needed = permissions.get(operationId);
    return ctx -> {
      Principal principal = ctx.get(PRINCIPAL);
      if (needed == Permission.NONE) {
        ctx.next();
      } else if (principal == null) {
        deny(ctx, ApiError.of(ErrorCode.Unauthorized, "send an API token as 'Authorization: Bearer <token>'"),
            false);
      } else if (!principal.role().grants(needed)) {
        deny(ctx, forbidden(principal, needed, operationId), false);
      } else {
        ctx.next();
      }
    };
  }

  private static ApiError forbidden(Principal principal, Permission needed, String operationId) {
    return ApiError.of(ErrorCode.Forbidden, "role '" + principal.role().wireName() + "' does not grant '"
        + needed.wireName() + "' needed by " + operationId);
  }

  /** {@code path} without repeated or trailing slashes. */
  static String canonical(String path) {
    String collapsed = path.replaceAll("/{2,}", "/");
    return collapsed.length() > 1 && collapsed.endsWith("/") ? collapsed.substring(0, collapsed.length() - 1)
        : collapsed;
  }

  /**
   * The token of a {@code Bearer} header, or (where allowed) the password of a {@code Basic} one — for clients that
   * can only put credentials in a URL, as iPXE does ({@code http://boot:TOKEN@api/v1/boot/ipxe}); null if neither.
   */
  static String token(String header, boolean basicAllowed) {
    if (header == null) {
      return null;
    }
    if (header.regionMatches(true, 0, "Bearer ", 0, 7) && header.length() > 7) {
      return header.substring(7).trim();
    }
    if (basicAllowed && header.regionMatches(true, 0, "Basic ", 0, 6)) {
      try {
        String decoded = new String(java.util.Base64.getDecoder().decode(header.substring(6).trim()),
            java.nio.charset.StandardCharsets.UTF_8);
        int colon = decoded.indexOf(':');
        return colon < 0 || colon == decoded.length() - 1 ? null : decoded.substring(colon + 1);
      } catch (IllegalArgumentException notBase64) {
        return null;
      }
    }
    return null;
  }

  private static void deny(RoutingContext ctx, ApiError error, boolean challengeBasic) {
    if (error.code() == ErrorCode.Unauthorized) {
      ctx.response().headers().add("WWW-Authenticate", "Bearer realm=\"warmmetal\"");
      if (challengeBasic) {
        // iPXE sends the credentials of a URL only when challenged for them.
        ctx.response().headers().add("WWW-Authenticate", "Basic realm=\"warmmetal\"");
      }
    }
    ErrorResponses.send(ctx, error);
  }
}
