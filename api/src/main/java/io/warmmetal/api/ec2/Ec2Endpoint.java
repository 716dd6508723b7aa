package io.warmmetal.api.ec2;

import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Route;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.sqlclient.Pool;
import io.warmmetal.api.auth.AccessKeys;
import io.warmmetal.api.auth.Principal;
import io.warmmetal.api.auth.Scope;
import io.warmmetal.api.auth.SignatureFailure;
import io.warmmetal.api.auth.SignedRequest;
import io.warmmetal.api.http.ApiError;
import io.warmmetal.api.http.ErrorResponses;
import io.warmmetal.api.http.RequestIds;
import io.warmmetal.api.lifecycle.Lifecycle;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The EC2 Query protocol on the API port ({@value #PATH}): what the AWS SDKs, the AWS CLI and
 * Terraform's AWS provider send with an endpoint override — form-encoded {@code Action=…}, signed
 * with AWS Signature Version 4 by a token's access key — answered in EC2's XML, errors in EC2's
 * shape and codes. Each action maps onto what the JSON API does, with the same permissions and
 * tenancy.
 */
public final class Ec2Endpoint {
  public static final String PATH = "/ec2";

  private static final String DRY_RUN = "DryRun";
  private final Pool db;
  private final AccessKeys keys;
  private final Map<String, Action> actions = new LinkedHashMap<>();

  public Ec2Endpoint(Pool db, Lifecycle lifecycle, AccessKeys keys) {
    this.db = db;
    this.keys = keys;
    for (Action a :
        List.of(
            RunInstances.action(lifecycle, db),
            DescribeInstances.action(db),
            TerminateInstances.action(lifecycle, db),
            DescribeInstanceStatus.action(db),
            DescribeInstanceTypes.action(db),
            Tags.create(db),
            Tags.delete(db),
            Tags.describe(db),
            DescribeAvailabilityZones.action(db))) {
      actions.put(a.name(), a);
    }
  }

  /** The actions answered, in the order the manual lists them. */
  public List<String> actions() {
    return new ArrayList<>(actions.keySet());
  }

  /**
   * Serves {@value #PATH} (any method) and {@code POST /} on {@code router}, ahead of the JSON
   * API's handlers: its own body limit, authentication and error shape. The root because the AWS
   * SDK for Java v2 drops an endpoint override's path for Query-protocol services
   * (aws-sdk-java-v2#3387); a {@code GET /} stays the console's.
   *
   * @param order where among the router's routes (before its root handlers)
   * @param edge what the port does with every request once its body is read (the body clock, the
   *     access log), as its root handlers do for the JSON API
   */
  public void mount(Router router, int order, long bodyLimit, List<Handler<RoutingContext>> edge) {
    for (Route route : List.of(router.post("/"), router.routeWithRegex(PATH + "/*"))) {
      route.order(order).handler(BodyHandler.create(false).setBodyLimit(bodyLimit));
      edge.forEach(route::handler);
      route.handler(this::handle).failureHandler(this::fail);
    }
  }

  private void handle(RoutingContext ctx) {
    RequestIds.ensure(ctx);
    HttpMethod method = ctx.request().method();
    if (method != HttpMethod.POST && method != HttpMethod.GET) {
      reply(ctx, new Ec2Error("InvalidRequest", 405, "Send EC2 requests as POST (or GET)"));
      return;
    }
    String uri = ctx.request().uri();
    int q = uri.indexOf('?');
    Buffer body = ctx.body().buffer();
    byte[] bytes = body == null ? new byte[0] : body.getBytes();
    SignedRequest signed =
        new SignedRequest(
            method.name(),
            q < 0 ? uri : uri.substring(0, q),
            q < 0 ? null : uri.substring(q + 1),
            ctx.request().headers(),
            bytes);
    Future.succeededFuture(signed)
        .compose(keys::authenticate)
        .compose(
            principal ->
                answer(
                    ctx, principal, new String(bytes, StandardCharsets.UTF_8), signed.rawQuery()))
        .onSuccess(
            xml ->
                ctx.response()
                    .putHeader("Content-Type", "text/xml;charset=UTF-8")
                    .end(xml.finish()))
        .onFailure(ctx::fail);
  }

  private Future<Xml> answer(
      RoutingContext ctx, Principal principal, String body, String rawQuery) {
    QueryRequest params = QueryRequest.parse(body, rawQuery);
    String name = params.action();
    if (name == null || name.isEmpty()) {
      throw new Ec2Error("MissingAction", 400, "The request must contain the parameter Action");
    }
    Action action = actions.get(name);
    if (action == null) {
      throw new Ec2Error(
          "InvalidAction",
          400,
          "The action "
              + name
              + " is not valid for this web service (it answers "
              + String.join(", ", actions.keySet())
              + ")");
    }
    if (!principal.role().grants(action.permission())) {
      throw new Ec2Error(
          "UnauthorizedOperation",
          403,
          "You are not authorized to perform this operation: role '"
              + principal.role().wireName()
              + "' does not grant '"
              + action.permission().wireName()
              + "' needed by "
              + name);
    }
    List<String> accepted = new ArrayList<>(action.parameters());
    accepted.add(DRY_RUN);
    params.accept(name, accepted);
    boolean dryRun = params.bool(DRY_RUN);
    return Scope.of(principal, ctx.request().getHeader(Scope.HEADER), db)
        .compose(
            scope -> {
              if (dryRun) {
                throw new Ec2Error(
                    "DryRunOperation",
                    412,
                    "Request would have succeeded, but DryRun flag is set.");
              }
              return action
                  .answer()
                  .answer(new Ec2Call(name, params, principal, scope, RequestIds.get(ctx)));
            });
  }

  private void fail(RoutingContext ctx) {
    if (ctx.response().headWritten() || ctx.response().closed()) {
      ErrorResponses.handle(ctx); // resets or drops it, as every route does
      return;
    }
    Throwable failure = ctx.failure();
    Ec2Error error;
    if (failure instanceof Ec2Error e) {
      error = e;
    } else if (failure instanceof SignatureFailure s) {
      error = new Ec2Error(s.code(), s.status(), s.getMessage());
    } else if (ctx.statusCode() == 400) {
      // Vert.x's body handler could not decode the form (a broken escape, say).
      error = new Ec2Error("MalformedQueryString", 400, "The request is not valid form encoding");
    } else {
      ApiError api = ErrorResponses.resolve(ctx); // a refusal, an outage, a body too large, …
      error = Ec2Error.from(api, "InvalidInstanceID.NotFound");
    }
    reply(ctx, error);
  }

  private static void reply(RoutingContext ctx, Ec2Error error) {
    String requestId = RequestIds.get(ctx);
    if (error.retryAfterSeconds() > 0) {
      ctx.response().putHeader("Retry-After", Integer.toString(error.retryAfterSeconds()));
    }
    ctx.response()
        .setStatusCode(error.status())
        .putHeader("Content-Type", "text/xml;charset=UTF-8")
        .end(Xml.error(error.code(), error.getMessage(), requestId).finish());
  }
}
