package io.warmmetal.controller.instances;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;

/**
 * Short-lived kubeadm bootstrap tokens, one per NodeClaim, kept as the standard {@code
 * bootstrap-token-<id>} Secrets in {@code kube-system}. The id derives from the NodeClaim's UID, so
 * a controller that restarts mid-launch finds the same token and its retried launch has the same
 * parameters (the API then returns the same instance).
 */
public final class BootstrapTokens {
  private static final String ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
  private static final SecureRandom RANDOM = new SecureRandom();

  private BootstrapTokens() {}

  /**
   * The claim's token ({@code id.secret}), created if it does not exist — created first and read
   * only if it did (a retried launch), so a new claim costs one request.
   */
  public static String forClaim(KubernetesClient kube, String claimUid, Duration ttl) {
    String id = idFor(claimUid);
    String name = "bootstrap-token-" + id;
    StringBuilder secret = new StringBuilder();
    for (int i = 0; i < 16; i++) {
      secret.append(ALPHABET.charAt(RANDOM.nextInt(ALPHABET.length())));
    }
    try {
      kube.secrets()
          .inNamespace("kube-system")
          .resource(
              new SecretBuilder()
                  .withNewMetadata()
                  .withName(name)
                  .withNamespace("kube-system")
                  .withLabels(Map.of("app.kubernetes.io/managed-by", "warmmetal-controller"))
                  .endMetadata()
                  .withType("bootstrap.kubernetes.io/token")
                  .withStringData(
                      Map.of(
                          "token-id",
                          id,
                          "token-secret",
                          secret.toString(),
                          "expiration",
                          Instant.now().plus(ttl).toString(),
                          "usage-bootstrap-authentication",
                          "true",
                          "usage-bootstrap-signing",
                          "true",
                          "auth-extra-groups",
                          "system:bootstrappers:kubeadm:default-node-token"))
                  .build())
          .create();
      return id + "." + secret;
    } catch (KubernetesClientException e) {
      if (e.getCode() != 409) {
        throw e;
      }
    }
    Secret existing = kube.secrets().inNamespace("kube-system").withName(name).get();
    String kept =
        existing.getData() != null && existing.getData().containsKey("token-secret")
            ? decode(existing.getData().get("token-secret"))
            : existing.getStringData().get("token-secret");
    return id + "." + kept;
  }

  static String idFor(String uid) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(uid.getBytes(StandardCharsets.UTF_8));
      StringBuilder id = new StringBuilder();
      for (int i = 0; i < 6; i++) {
        id.append(ALPHABET.charAt((digest[i] & 0xff) % ALPHABET.length()));
      }
      return id.toString();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String decode(String value) {
    return new String(Base64.getDecoder().decode(value), StandardCharsets.UTF_8);
  }
}
