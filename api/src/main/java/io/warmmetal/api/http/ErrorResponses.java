package io.warmmetal.api.http;

import io.vertx.core.Future;
import io.vertx.core.VertxException;
import io.vertx.core.http.HttpClosedException;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.DecodeException;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.HttpException;
import io.vertx.json.schema.OutputUnit;
import io.vertx.openapi.validation.SchemaValidationException;
import io.vertx.openapi.validation.ValidatorErrorType;
import io.vertx.openapi.validation.ValidatorException;
import io.vertx.pgclient.PgException;
import io.warmmetal.api.db.TransientFailures;
import io.warmmetal.api.lifecycle.Refusal;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Renders every failure in the one error shape: {@code
 * {"code","message","field"?,"details"?,"requestId"}}. Validation failures name the offending
 * field; a failure a retry can outlive (the database down, a connection lost, a timeout) is a 503
 * with Retry-After, logged once per burst; anything else unexpected is a 500 whose details stay in
 * the log.
 */
public final class ErrorResponses {
  private static final Logger LOG = LoggerFactory.getLogger(ErrorResponses.class);
  private static final Pattern REQUIRED = Pattern.compile("required property \"([^\"]+)\"");
  private static final Pattern PARAMETER =
      Pattern.compile("(?:query|path|header|cookie) parameter (\\S+?)[.\\s]");

  private static final OutageLog OUTAGE =
      new OutageLog(LOG, "database unavailable", "requests", Duration.ofSeconds(30));

  private ErrorResponses() {}

  /** The failure handler of every route. */
  public static void handle(RoutingContext ctx) {
    if (ctx.response().headWritten()) {
      ctx.response().reset();
      return;
    }
    if (ctx.failure() instanceof HttpClosedException || ctx.response().closed()) {
      // The client went away (mid-body, say): nobody to answer, nothing wrong here.
      LOG.debug(
          "Request {} {} ended by the client's disconnect [requestId={}]",
          ctx.request().method(),
          ctx.request().path(),
          RequestIds.get(ctx));
      return;
    }
    send(ctx, resolve(ctx));
  }

  /**
   * A failed request's failure in the API's terms (a refusal, a database outage, an internal
   * error), logged as every route logs it: an outage once per outage, an internal error with its
   * stack.
   */
  public static ApiError resolve(RoutingContext ctx) {
    RequestIds.ensure(ctx); // a request Vert.x Web refused before any route (no Host) has none yet
    ApiError error = toApiError(ctx);
    if (error.code() == ErrorCode.ServiceUnavailable && ctx.failure() != null) {
      OUTAGE.failed(ctx.failure());
      LOG.debug(
          "Request {} {} answered 503 [requestId={}]: {}",
          ctx.request().method(),
          ctx.request().path(),
          RequestIds.get(ctx),
          OutageLog.describe(ctx.failure()));
    } else if (error.code() == ErrorCode.InternalError) {
      LOG.error(
          "Request {} {} failed [requestId={}]",
          ctx.request().method(),
          ctx.request().path(),
          RequestIds.get(ctx),
          ctx.failure());
    }
    return error;
  }

  public static Future<Void> send(RoutingContext ctx, ApiError error) {
    return send(ctx.response(), error, RequestIds.get(ctx));
  }

  /** The error as the response, for the few answers given before routing. */
  static Future<Void> send(HttpServerResponse response, ApiError error, String requestId) {
    if (error.retryAfterSeconds() > 0) {
      response.headers().set("Retry-After", Integer.toString(error.retryAfterSeconds()));
    }
    if (requestId != null) {
      response.putHeader("X-Request-Id", requestId);
    }
    return response
        .setStatusCode(error.code().status())
        .putHeader("Content-Type", "application/json")
        .end(error.toJson(requestId).toBuffer());
  }

  static ApiError toApiError(RoutingContext ctx) {
    Throwable failure = ctx.failure();
    int status = ctx.statusCode();
    if (failure instanceof HttpException http) {
      // Vert.x Web wraps validation failures (and body-limit refusals) with their status.
      status = http.getStatusCode();
      failure = http.getCause();
    }
    if (failure instanceof ApiError e) {
      return e;
    }
    if (failure instanceof Refusal r) {
      return ApiError.from(r);
    }
    if (failure instanceof SchemaValidationException e) {
      return fromSchemaFailure(e);
    }
    if (failure instanceof ValidatorException e) {
      return fromValidatorFailure(e);
    }
    if (failure instanceof DecodeException) {
      return ApiError.invalid("body", "the request body is not valid JSON");
    }
    if (failure instanceof PgException pg && pg.getSqlState() != null) {
      ApiError mapped = fromDatabase(pg);
      if (mapped != null) {
        return mapped;
      }
    }
    if (TransientFailures.isTransient(failure)) {
      return ApiError.of(ErrorCode.ServiceUnavailable, "the database is unavailable; retry");
    }
    boolean refusedByVertx =
        status >= 400 && status < 500; // Vert.x Web's own refusals, such as a missing Host
    if (failure == null || ctx.failure() instanceof HttpException || refusedByVertx) {
      return switch (status) {
        case 404 -> ApiError.of(ErrorCode.NotFound, "no such resource: " + ctx.request().path());
        case 405 ->
            ApiError.of(
                ErrorCode.MethodNotAllowed,
                ctx.request().method() + " is not allowed on " + ctx.request().path());
        case 408 -> ApiError.of(ErrorCode.RequestTimeout, "the request came too slowly");
        case 413 -> ApiError.of(ErrorCode.RequestTooLarge, "the request body is too large");
        case 414 -> ApiError.of(ErrorCode.UriTooLong, "the request URL is too long");
        case 415 ->
            ApiError.of(ErrorCode.UnsupportedMediaType, "send the body as application/json");
        case 417 ->
            ApiError.of(
                ErrorCode.ExpectationFailed, "the only Expect this server meets is 100-continue");
        case 431 -> ApiError.of(ErrorCode.HeadersTooLarge, "the request's headers are too large");
        case 400 ->
            ApiError.of(
                ErrorCode.ValidationError,
                failure instanceof VertxException e && e.getMessage() != null
                    ? e.getMessage()
                    : "bad request");
        // Any other refusal Vert.x raises itself is still the caller's: a 400, never an internal
        // error.
        default ->
            refusedByVertx
                ? ApiError.of(
                    ErrorCode.ValidationError, "the request was refused (HTTP " + status + ")")
                // Vert.x Web cannot decode such a URL and ends the request as a 500 with no
                // failure: the caller's.
                : Objects.requireNonNullElse(
                    MalformedEscapes.find(ctx.request().uri()),
                    ApiError.of(ErrorCode.InternalError, "internal error"));
      };
    }
    ApiError escape =
        failure instanceof IllegalArgumentException
            ? MalformedEscapes.find(ctx.request().uri())
            : null;
    if (escape != null) {
      // Netty cannot decode the query string when its parameters are first read: the caller's
      // escape.
      return escape;
    }
    return ApiError.of(ErrorCode.InternalError, "internal error");
  }

  /**
   * Input the contract allowed but PostgreSQL refuses (a NUL character, say) is the caller's
   * problem (a database that is down or overloaded is a transient failure, below). Anything else
   * stays an internal error.
   */
  private static ApiError fromDatabase(PgException pg) {
    String state = pg.getSqlState();
    if (state.startsWith("22")) {
      return ApiError.invalid("body", "a value is not acceptable: " + pg.getErrorMessage());
    }
    return null;
  }

  private static ApiError fromSchemaFailure(SchemaValidationException e) {
    Matcher param = PARAMETER.matcher(e.getMessage() + " ");
    boolean isParameter = param.find();
    OutputUnit cause = mostSpecific(e.getOutputUnit());
    String reason = cause != null && cause.getError() != null ? cause.getError() : e.getMessage();
    String field =
        isParameter
            ? param.group(1)
            : bodyField(cause == null ? null : cause.getInstanceLocation());
    Matcher required = REQUIRED.matcher(reason);
    if (!isParameter && required.find()) {
      field =
          field == null || field.isEmpty() ? required.group(1) : field + "." + required.group(1);
      reason = "required";
    }
    if (field == null || field.isEmpty()) {
      field = "body";
    }
    if (!isParameter && reason.contains("additional properties")) {
      reason = "unknown property (the contract does not define it)";
    }
    return ApiError.invalid(field, (isParameter ? "parameter " : "") + field + ": " + reason);
  }

  private static ApiError fromValidatorFailure(ValidatorException e) {
    if (e.type() == ValidatorErrorType.MISSING_OPERATION) {
      return ApiError.of(ErrorCode.NotFound, e.getMessage());
    }
    Matcher param = PARAMETER.matcher(e.getMessage() + " ");
    String field = param.find() ? param.group(1) : "body";
    if ("body".equals(field) && e.type() == ValidatorErrorType.UNSUPPORTED_VALUE_FORMAT) {
      return ApiError.of(ErrorCode.UnsupportedMediaType, "send the body as application/json");
    }
    String message = e.getMessage();
    if ("body".equals(field) && message.toLowerCase().contains("decode")) {
      message = "the request body is not valid JSON";
    }
    return ApiError.invalid(field, message);
  }

  /**
   * The most telling failure: the deepest instance location, and there the deepest keyword (a
   * failed {@code type} or {@code required} rather than the generic "does not match schema"
   * wrappers around it).
   */
  private static OutputUnit mostSpecific(OutputUnit root) {
    List<OutputUnit> leaves = new ArrayList<>();
    collect(root, leaves);
    OutputUnit best = null;
    for (OutputUnit u : leaves) {
      if (best == null
          || depth(u.getInstanceLocation()) > depth(best.getInstanceLocation())
          || (depth(u.getInstanceLocation()) == depth(best.getInstanceLocation())
              && depth(u.getKeywordLocation()) > depth(best.getKeywordLocation()))) {
        best = u;
      }
    }
    return best;
  }

  private static void collect(OutputUnit unit, List<OutputUnit> out) {
    if (unit == null) {
      return;
    }
    if (unit.getError() != null) {
      out.add(unit);
    }
    if (unit.getErrors() != null) {
      unit.getErrors().forEach(child -> collect(child, out));
    }
  }

  private static int depth(String pointer) {
    return pointer == null ? 0 : pointer.split("/", -1).length;
  }

  private static String bodyField(String instanceLocation) {
    if (instanceLocation == null) {
      return null;
    }
    String loc =
        instanceLocation.startsWith("#") ? instanceLocation.substring(1) : instanceLocation;
    loc = URLDecoder.decode(loc, StandardCharsets.UTF_8);
    return loc.startsWith("/") ? loc.substring(1).replace('/', '.') : loc;
  }
}
