package io.warmmetal.api.testing;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.PemKeyCertOptions;
import io.warmmetal.api.crypto.CertificateAuthority;
import io.warmmetal.protocol.CaPin;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A Redfish BMC on a loopback HTTPS port, as far as power goes: {@code GET /redfish/v1/Systems/1}
 * and the {@code ComputerSystem.Reset} action, behind basic authentication, with a certificate from
 * a throwaway CA. No Redfish emulator is installable here (sushy-tools needs PyPI), and this is not
 * one of our components.
 */
public final class RedfishBmc implements AutoCloseable {
  public static final String USER = "root";
  public static final String PASSWORD = "bmc-secret";
  public final int port;

  /** Pins of the CA that signed the BMC's certificate, and of the certificate's own key. */
  public final CaPin caPin;

  public final CaPin leafPin;
  private final HttpServer server;
  private volatile String powerState = "Off";
  private volatile int resets;
  private final AtomicInteger statusReads = new AtomicInteger();
  private volatile long statusDelayMillis;
  private final Vertx vertx;

  private RedfishBmc(Vertx vertx, HttpServer server, CaPin caPin, CaPin leafPin) {
    this.vertx = vertx;
    this.server = server;
    this.port = server.actualPort();
    this.caPin = caPin;
    this.leafPin = leafPin;
  }

  public static RedfishBmc start(Vertx vertx) throws Exception {
    CertificateAuthority ca =
        CertificateAuthority.loadOrCreate(
            Files.createTempDirectory("redfish-ca"), Optional.empty(), Optional.empty());
    CertificateAuthority.Issued cert = ca.issueServer(List.of("127.0.0.1"), Duration.ofDays(1));
    RedfishBmc[] self = new RedfishBmc[1];
    HttpServer server =
        vertx
            .createHttpServer(
                new HttpServerOptions()
                    .setSsl(true)
                    .setHost("127.0.0.1")
                    .setPort(0)
                    .setKeyCertOptions(
                        new PemKeyCertOptions()
                            .addKeyValue(Buffer.buffer(CertificateAuthority.pem(cert.key())))
                            .addCertValue(
                                Buffer.buffer(
                                    CertificateAuthority.pem(cert.certificate())
                                        + CertificateAuthority.pem(ca.certificate())))))
            .requestHandler(req -> self[0].handle(req))
            .listen()
            .await();
    self[0] = new RedfishBmc(vertx, server, ca.pin(), CaPin.of(cert.certificate()));
    return self[0];
  }

  private void handle(HttpServerRequest req) {
    String expected =
        "Basic "
            + Base64.getEncoder()
                .encodeToString((USER + ":" + PASSWORD).getBytes(StandardCharsets.UTF_8));
    if (!expected.equals(req.getHeader("Authorization"))) {
      req.response().setStatusCode(401).end();
      return;
    }
    if (req.path().equals("/redfish/v1/Systems/1") && req.method().name().equals("GET")) {
      statusReads.incrementAndGet();
      String state = powerState;
      Runnable answer =
          () ->
              req.response()
                  .putHeader("Content-Type", "application/json")
                  .end(new JsonObject().put("Id", "1").put("PowerState", state).encode());
      if (statusDelayMillis > 0) {
        vertx.setTimer(statusDelayMillis, t -> answer.run());
      } else {
        answer.run();
      }
    } else if (req.path().equals("/redfish/v1/Systems/1/Actions/ComputerSystem.Reset")
        && req.method().name().equals("POST")) {
      req.body()
          .onSuccess(
              body -> {
                String type = body.toJsonObject().getString("ResetType");
                switch (type) {
                  case "On" -> powerState = "On";
                  case "ForceOff", "GracefulShutdown" -> powerState = "Off";
                  default -> {
                    req.response().setStatusCode(400).end();
                    return;
                  }
                }
                resets++;
                req.response().setStatusCode(204).end();
              });
    } else {
      req.response().setStatusCode(404).end();
    }
  }

  public boolean poweredOn() {
    return powerState.equals("On");
  }

  public int resets() {
    return resets;
  }

  /**
   * How many times the system's power was read (each a BMC session a real BMC would have to serve).
   */
  public int statusReads() {
    return statusReads.get();
  }

  /** Makes every power read take this long, as a busy BMC's would. */
  public void delayStatus(long millis) {
    statusDelayMillis = millis;
  }

  @Override
  public void close() {
    server.close().await();
  }
}
