package io.warmmetal.agent.enrollment;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.TrustOptions;
import io.warmmetal.protocol.CaPin;
import io.warmmetal.protocol.PinnedTrustManager;
import java.io.IOException;
import java.io.StringWriter;
import java.net.URI;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.spec.ECGenParameterSpec;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.pkcs.PKCS10CertificationRequest;
import org.bouncycastle.pkcs.jcajce.JcaPKCS10CertificationRequestBuilder;

/**
 * Enrolls an agent: makes its own key pair (the key never leaves the host), sends a certificate
 * request with the host's facts and identity and the enrollment token to the API's agent port —
 * after verifying the port's certificate against the CA pin, so the token goes nowhere else — and
 * returns the identity to keep.
 */
public final class Enrollment {
  private final Vertx vertx;
  private final URI api;
  private final HttpClient http;

  /**
   * @param api the agent port, e.g. {@code https://api.example:8443}
   * @param pin the CA pin the operator gave the agent
   */
  public Enrollment(Vertx vertx, URI api, CaPin pin) {
    this.vertx = vertx;
    this.api = api;
    this.http =
        vertx.createHttpClient(
            new HttpClientOptions()
                .setSsl(true)
                .setTrustOptions(TrustOptions.wrap(new PinnedTrustManager(pin)))
                .setVerifyHost(
                    false)); // the pinned CA is the trust decision; agents may reach the API by any
    // name
  }

  /**
   * Enrolls with {@code token}, describing this machine by {@code machine} (name, address, facts,
   * identity).
   */
  public Future<AgentIdentity> enroll(String token, JsonObject machine) {
    return vertx
        .executeBlocking(Enrollment::keyAndRequest, false)
        .compose(
            kr ->
                http.request(
                        new RequestOptions()
                            .setMethod(HttpMethod.POST)
                            .setHost(api.getHost())
                            .setPort(api.getPort())
                            .setURI("/v1/enroll")
                            .putHeader("Authorization", "Bearer " + token)
                            .putHeader("Content-Type", "application/json"))
                    .compose(req -> req.send(machine.copy().put("csr", kr.csrPem).toBuffer()))
                    .compose(
                        resp ->
                            resp.body()
                                .map(
                                    body -> {
                                      JsonObject json = body.toJsonObject();
                                      if (resp.statusCode() != 201) {
                                        throw new EnrollmentRefused(
                                            resp.statusCode(),
                                            json.getString("code"),
                                            json.getString("message"));
                                      }
                                      return new AgentIdentity(
                                          json.getString("machineId"),
                                          kr.keyPem,
                                          json.getString("certificate"),
                                          json.getString("caCertificate"));
                                    })));
  }

  /**
   * Renews {@code identity}'s certificate: a new key pair and request, sent over mutual TLS with
   * the current certificate (the API verified by the CA the agent enrolled with). The result is the
   * identity to save; the API keeps the current certificate valid until the new one holds the
   * channel.
   */
  public static Future<AgentIdentity> renew(Vertx vertx, URI api, AgentIdentity identity) {
    HttpClient mtls =
        vertx.createHttpClient(
            new HttpClientOptions()
                .setSsl(true)
                .setVerifyHost(false)
                .setTrustOptions(
                    TrustOptions.wrap(new PinnedTrustManager(CaPin.of(identity.caCertificate()))))
                .setKeyCertOptions(
                    new PemKeyCertOptions()
                        .addKeyValue(Buffer.buffer(identity.keyPem()))
                        .addCertValue(Buffer.buffer(identity.certificatePem()))));
    return vertx
        .executeBlocking(Enrollment::keyAndRequest, false)
        .compose(
            kr ->
                mtls.request(
                        new RequestOptions()
                            .setMethod(HttpMethod.POST)
                            .setHost(api.getHost())
                            .setPort(api.getPort())
                            .setURI("/v1/renew")
                            .putHeader("Content-Type", "application/json"))
                    .compose(req -> req.send(new JsonObject().put("csr", kr.csrPem).toBuffer()))
                    .compose(
                        resp ->
                            resp.body()
                                .map(
                                    body -> {
                                      JsonObject json = body.toJsonObject();
                                      if (resp.statusCode() != 200) {
                                        throw new EnrollmentRefused(
                                            resp.statusCode(),
                                            json.getString("code"),
                                            json.getString("message"));
                                      }
                                      return new AgentIdentity(
                                          identity.machineId(),
                                          kr.keyPem,
                                          json.getString("certificate"),
                                          json.getString("caCertificate"));
                                    })))
        .eventually(mtls::close);
  }

  public Future<Void> close() {
    return http.close();
  }

  /** The API said no; its error code and message say why. */
  public static final class EnrollmentRefused extends RuntimeException {
    private final int status;
    private final String code;

    EnrollmentRefused(int status, String code, String message) {
      super("enrollment refused (" + status + " " + code + "): " + message);
      this.status = status;
      this.code = code;
    }

    public int status() {
      return status;
    }

    public String code() {
      return code;
    }
  }

  private record KeyAndRequest(String keyPem, String csrPem) {}

  private static KeyAndRequest keyAndRequest() throws GeneralSecurityException {
    KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
    generator.initialize(new ECGenParameterSpec("secp256r1"));
    KeyPair pair = generator.generateKeyPair();
    try {
      PKCS10CertificationRequest csr =
          new JcaPKCS10CertificationRequestBuilder(
                  new X500Name("CN=warmmetal-agent"), pair.getPublic())
              .build(new JcaContentSignerBuilder("SHA256withECDSA").build(pair.getPrivate()));
      return new KeyAndRequest(pem(pair.getPrivate()), pem(csr));
    } catch (OperatorCreationException e) {
      throw new GeneralSecurityException("cannot sign the certificate request", e);
    }
  }

  static String pem(Object object) {
    StringWriter out = new StringWriter();
    try (JcaPEMWriter writer = new JcaPEMWriter(out)) {
      if (object instanceof PrivateKey key) {
        writer.writeObject(new JcaPKCS8Generator(key, null)); // PKCS#8 PEM
      } else {
        writer.writeObject(object);
      }
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    return out.toString();
  }
}
