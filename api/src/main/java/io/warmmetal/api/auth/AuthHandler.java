package io.warmmetal.api.auth;

import io.vertx.core.Handler;
import io.vertx.ext.web.RoutingContext;
import io.vertx.openapi.contract.Location;
import io.vertx.openapi.contract.OpenAPIContract;
import io.vertx.openapi.contract.Operation;
import io.vertx.openapi.contract.Parameter;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.ErrorCode;
import io.warmmetal.api.http.ErrorResponses;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;

/**
 * Authenticates the bearer token and checks the operation's {@code x-warmmetal-permission} before
 * the request is validated, so an unauthenticated caller learns nothing about the contract (401,
 * then 403, then 400). A query parameter may carry its own {@code x-warmmetal-permission}: asking
 * for it (any value but {@code false}) needs that permission too — as {@code observe=true} on a
 * machine's power, which reaches its BMC.
 */
public final class AuthHandler implements Handler<RoutingContext> {
  public static final String PERMISSION_EXTENSION = "x-warmmetal-permission";
  private static final String PRINCIPAL = "warmmetal.principal";

  private final OpenAPIContract contract;
  private final TokenStore tokens;
  private final Map<String, Permission> permissions = new HashMap<>();
  private final Map<String, Map<String, Permission>> parameterPermissions = new HashMap<>();

  public AuthHandler(OpenAPIContract contract, TokenStore tokens) {
    this.contract = contract;
    this.tokens = tokens;
    for (Operation op : contract.operations()) {
      Object p = op.getExtensions().get(PERMISSION_EXTENSION);
      if (p == null) {
        throw new IllegalStateException(
            "operation " + op.getOperationId() + " declares no " + PERMISSION_EXTENSION);
      }
      permissions.put(op.getOperationId(), Permission.fromWire(p.toString()));
      for (Parameter param : op.getParameters()) {
        Object pp = param.getExtensions().get(PERMISSION_EXTENSION);
        if (pp != null) {
          if (param.getIn() != Location.QUERY) {
            throw new IllegalStateException(
                op.getOperationId()
                    + ": "
                    + PERMISSION_EXTENSION
                    + " on a "
                    + param.getIn()
                    + " parameter; only query parameters may ask more");
          }
          parameterPermissions
              .computeIfAbsent(op.getOperationId(), k -> new HashMap<>())
              .put(param.getName(), Permission.fromWire(pp.toString()));
        }
      }
    }
  }

  public static Principal principal(RoutingContext ctx) {
    return ctx.get(PRINCIPAL);
  }

  /** Whether the request's authenticated caller holds {@code permission} (false without one). */
  public static boolean grants(RoutingContext ctx, Permission permission) {
    Principal p = principal(ctx);
    return p != null && p.role().grants(permission);
  }

  @Override
  public void handle(RoutingContext ctx) {
    // The path as the router will match it (dot segments resolved, escapes of unreserved characters
    // decoded,
    // repeated and trailing slashes dropped): a spelling the contract lookup missed must not skip
    // the check.
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
    // Basic credentials only where iPXE needs them (boot scripts): a browser's cached Basic login
    // must not be
    // enough for anything else.
    boolean basicAllowed = needed == Permission.BOOT;
    String token = token(ctx.request().getHeader("Authorization"), basicAllowed);
    if (token == null) {
      deny(
          ctx,
          ApiError.of(
              ErrorCode.Unauthorized, "send an API token as 'Authorization: Bearer <token>'"),
          basicAllowed);
      return;
    }
    tokens
        .authenticate(token)
        .onComplete(
            ar -> {
              if (ar.failed()) {
                ctx.fail(ar.cause());
              } else if (ar.result().isEmpty()) {
                deny(
                    ctx,
                    ApiError.of(ErrorCode.Unauthorized, "the API token is unknown or revoked"),
                    basicAllowed);
              } else {
                // No operation matched (needed == null): the router answers 404 or 405, and should
                // it route the request
                // to an operation after all, that operation's guard checks the permission.
                ApiError refused =
                    needed == null
                        ? null
                        : refusal(ctx, ar.result().get(), needed, op.getOperationId());
                if (refused != null) {
                  deny(ctx, refused, false);
                  return;
                }
                ctx.put(PRINCIPAL, ar.result().get());
                ctx.next();
              }
            });
  }

  /**
   * The check again, on the operation's own route, with the principal the root handler
   * authenticated: should the router ever reach an operation the contract lookup did not find, it
   * still fails closed.
   */
  public Handler<RoutingContext> guard(String operationId) {
    Permission needed = permissions.get(operationId);
    return ctx -> {
      Principal principal = ctx.get(PRINCIPAL);
      if (needed == Permission.NONE) {
        ctx.next();
      } else if (principal == null) {
        deny(
            ctx,
            ApiError.of(
                ErrorCode.Unauthorized, "send an API token as 'Authorization: Bearer <token>'"),
            false);
      } else {
        ApiError refused = refusal(ctx, principal, needed, operationId);
        if (refused != null) {
          deny(ctx, refused, false);
        } else {
          ctx.next();
        }
      }
    };
  }

  private static ApiError forbidden(Principal principal, Permission needed, String operationId) {
    return ApiError.of(
        ErrorCode.Forbidden,
        "role '"
            + principal.role().wireName()
            + "' does not grant '"
            + needed.wireName()
            + "' needed by "
            + operationId);
  }

  /**
   * The 403 if the caller lacks the operation's permission, or that of a query parameter it asked
   * for (naming the parameter); null if allowed.
   */
  private ApiError refusal(
      RoutingContext ctx, Principal principal, Permission needed, String operationId) {
    if (!principal.role().grants(needed)) {
      return forbidden(principal, needed, operationId);
    }
    for (Map.Entry<String, Permission> e :
        parameterPermissions.getOrDefault(operationId, Map.of()).entrySet()) {
      boolean asked =
          ctx.queryParam(e.getKey()).stream().anyMatch(v -> !"false".equalsIgnoreCase(v.trim()));
      if (asked && !principal.role().grants(e.getValue())) {
        return new ApiError(
            ErrorCode.Forbidden,
            forbidden(principal, e.getValue(), operationId + " with " + e.getKey()).getMessage(),
            e.getKey(),
            null);
      }
    }
    return null;
  }

  /** {@code path} without repeated or trailing slashes. */
  static String canonical(String path) {
    String collapsed = path.replaceAll("/{2,}", "/");
    return collapsed.length() > 1 && collapsed.endsWith("/")
        ? collapsed.substring(0, collapsed.length() - 1)
        : collapsed;
  }

  /**
   * The token of a {@code Bearer} header, or (where allowed) the password of a {@code Basic} one —
   * for clients that can only put credentials in a URL, as iPXE does ({@code
   * http://boot:TOKEN@api/v1/boot/ipxe}); null if neither.
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
        String decoded =
            new String(
                Base64.getDecoder().decode(header.substring(6).trim()), StandardCharsets.UTF_8);
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
