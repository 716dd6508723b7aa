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
    Operation op = ctx.request().path().startsWith("/v1/")
        ? contract.findOperation(ctx.request().path(), ctx.request().method()) : null;
    if (op == null) {
      ctx.next(); // not an API operation: health, metrics, or a 404/405 for the router to answer
      return;
    }
    Permission needed = permissions.get(op.getOperationId());
    if (needed == Permission.NONE) {
      ctx.next();
      return;
    }
    String token = token(ctx.request().getHeader("Authorization"));
    if (token == null) {
      deny(ctx, ApiError.of(ErrorCode.Unauthorized, "send an API token as 'Authorization: Bearer <token>'"));
      return;
    }
    tokens.authenticate(token).onComplete(ar -> {
      if (ar.failed()) {
        ctx.fail(ar.cause());
      } else if (ar.result().isEmpty()) {
        deny(ctx, ApiError.of(ErrorCode.Unauthorized, "the API token is unknown or revoked"));
      } else if (!ar.result().get().role().grants(needed)) {
        deny(ctx, ApiError.of(ErrorCode.Forbidden, "role '" + ar.result().get().role().wireName()
            + "' does not grant '" + needed.name().toLowerCase() + "' needed by " + op.getOperationId()));
      } else {
        ctx.put(PRINCIPAL, ar.result().get());
        ctx.next();
      }
    });
  }

  /**
   * The token of a {@code Bearer} header, or the password of a {@code Basic} one — for clients that can only put
   * credentials in a URL, as iPXE does ({@code http://boot:TOKEN@api/v1/boot/ipxe}); null if neither.
   */
  static String token(String header) {
    if (header == null) {
      return null;
    }
    if (header.regionMatches(true, 0, "Bearer ", 0, 7) && header.length() > 7) {
      return header.substring(7).trim();
    }
    if (header.regionMatches(true, 0, "Basic ", 0, 6)) {
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

  private static void deny(RoutingContext ctx, ApiError error) {
    if (error.code() == ErrorCode.Unauthorized) {
      // Basic too: iPXE sends the credentials of a URL only when challenged for them.
      ctx.response().headers().add("WWW-Authenticate", "Bearer realm=\"warmmetal\"")
          .add("WWW-Authenticate", "Basic realm=\"warmmetal\"");
    }
    ErrorResponses.send(ctx, error);
  }
}
