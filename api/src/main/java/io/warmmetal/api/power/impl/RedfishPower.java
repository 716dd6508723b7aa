package io.warmmetal.api.power.impl;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.TrustOptions;
import io.warmmetal.api.power.PowerDriver;
import io.warmmetal.api.power.PowerState;
import io.warmmetal.api.power.RedfishTarget;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * {@link PowerDriver} on Redfish: the ComputerSystem's {@code PowerState}, and its {@code
 * ComputerSystem.Reset} action ({@code On}, {@code ForceOff}), over HTTPS with basic
 * authentication. The BMC is trusted by its pin only. One HTTP client per call, closed after it:
 * power calls are rare.
 */
public final class RedfishPower implements PowerDriver {
  private final Vertx vertx;
  private final RedfishTarget target;
  private final Duration timeout;

  public RedfishPower(Vertx vertx, RedfishTarget target, Duration timeout) {
    this.vertx = vertx;
    this.target = target;
    this.timeout = timeout;
  }

  private String system() {
    return "/redfish/v1/Systems/" + target.systemId();
  }

  @Override
  public Future<PowerState> status() {
    return call(
        HttpMethod.GET,
        system(),
        null,
        body -> {
          String state = new JsonObject(body).getString("PowerState", "");
          return switch (state) {
            case "On", "PoweringOn" -> PowerState.ON;
            case "Off", "PoweringOff" -> PowerState.OFF;
            default ->
                throw new IllegalStateException(
                    "BMC " + target + " answered an unknown PowerState '" + state + "'");
          };
        });
  }

  @Override
  public Future<Void> on() {
    return reset("On");
  }

  @Override
  public Future<Void> off() {
    return reset("ForceOff");
  }

  private Future<Void> reset(String type) {
    return call(
        HttpMethod.POST,
        system() + "/Actions/ComputerSystem.Reset",
        new JsonObject().put("ResetType", type),
        body -> null);
  }

  private <T> Future<T> call(
      HttpMethod method, String path, JsonObject json, Function<Buffer, T> answer) {
    HttpClient http =
        vertx.createHttpClient(
            new HttpClientOptions()
                .setSsl(true)
                .setVerifyHost(false)
                .setTrustOptions(TrustOptions.wrap(new PinnedPeerTrust(target.tlsPin())))
                .setConnectTimeout((int) timeout.toMillis()));
    String credentials =
        Base64.getEncoder()
            .encodeToString(
                (target.username() + ":" + target.password()).getBytes(StandardCharsets.UTF_8));
    RequestOptions request =
        new RequestOptions()
            .setMethod(method)
            .setHost(target.host())
            .setPort(target.port())
            .setURI(path)
            .putHeader("Authorization", "Basic " + credentials)
            .putHeader("Accept", "application/json")
            .setIdleTimeout(timeout.toMillis());
    return http.request(request)
        .compose(
            req ->
                json == null
                    ? req.send()
                    : req.putHeader("Content-Type", "application/json").send(json.toBuffer()))
        .compose(
            resp ->
                resp.body()
                    .map(
                        body -> {
                          if (resp.statusCode() == 401 || resp.statusCode() == 403) {
                            throw new IllegalStateException(
                                "BMC "
                                    + target
                                    + " refused the credentials ("
                                    + resp.statusCode()
                                    + ")");
                          }
                          if (resp.statusCode() / 100 != 2) {
                            throw new IllegalStateException(
                                "BMC "
                                    + target
                                    + " answered "
                                    + resp.statusCode()
                                    + " to "
                                    + method
                                    + " "
                                    + path);
                          }
                          return answer.apply(body);
                        }))
        .timeout(timeout.toMillis(), TimeUnit.MILLISECONDS)
        .recover(
            err ->
                Future.failedFuture(
                    err instanceof IllegalStateException
                        ? err
                        : new IllegalStateException(
                            "BMC " + target + " could not be reached: " + err.getMessage(), err)))
        .eventually(http::close);
  }
}
