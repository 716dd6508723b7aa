package io.warmmetal.controller.instances;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.warmmetal.controller.cloudprovider.CloudProviderException.NodeClassNotReady;
import io.warmmetal.controller.cloudprovider.CloudProviderException.Unavailable;
import io.warmmetal.controller.nodeclass.WarmMetalNodeClass;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The instances API a node class names, with the token from its Secret — read again at most every
 * {@link #TTL}, so a rotated token is picked up without a Secret read on every launch. One client
 * per endpoint, replaced when its token rotates (not one more per token, kept for ever).
 */
final class Credentials {
  static final Duration TTL = Duration.ofSeconds(30);

  private final KubernetesClient kube;
  private final Clock clock;
  private final Map<String, Token> tokens = new ConcurrentHashMap<>();
  private final Map<String, InstancesApi> apis = new ConcurrentHashMap<>();

  private record Token(String value, Instant readAt) {}

  Credentials(KubernetesClient kube, Clock clock) {
    this.kube = kube;
    this.clock = clock;
  }

  InstancesApi api(WarmMetalNodeClass nodeClass) throws NodeClassNotReady, Unavailable {
    var spec = nodeClass.getSpec();
    if (spec == null || spec.endpoint == null || spec.credentialsSecretRef == null) {
      throw new NodeClassNotReady(
          "WarmMetalNodeClass "
              + nodeClass.getMetadata().getName()
              + ": spec.endpoint and spec.credentialsSecretRef are required");
    }
    String token = token(spec.credentialsSecretRef);
    return apis.compute(
        spec.endpoint,
        (endpoint, current) ->
            current != null && current.usesToken(token)
                ? current
                : new InstancesApi(URI.create(endpoint), token));
  }

  private String token(WarmMetalNodeClass.SecretKeyRef ref) throws NodeClassNotReady, Unavailable {
    String key = ref.key == null ? "token" : ref.key;
    String secretId = ref.namespace + "/" + ref.name + "#" + key;
    Token cached = tokens.get(secretId);
    Instant now = clock.instant();
    if (cached != null && !cached.readAt().plus(TTL).isBefore(now)) {
      return cached.value();
    }
    Secret secret;
    try {
      secret = kube.secrets().inNamespace(ref.namespace).withName(ref.name).get();
    } catch (KubernetesClientException e) {
      throw new Unavailable(
          "Secret " + ref.namespace + "/" + ref.name + " not read: " + e.getMessage(),
          InstancesApi.DEFAULT_RETRY_AFTER);
    }
    if (secret == null) {
      throw new NodeClassNotReady(
          "Secret " + ref.namespace + "/" + ref.name + " (credentials) does not exist");
    }
    String token =
        secret.getData() != null && secret.getData().containsKey(key)
            ? new String(
                    Base64.getDecoder().decode(secret.getData().get(key)), StandardCharsets.UTF_8)
                .trim()
            : secret.getStringData() == null ? null : secret.getStringData().get(key);
    if (token == null) {
      throw new NodeClassNotReady(
          "Secret " + ref.namespace + "/" + ref.name + " has no key '" + key + "'");
    }
    tokens.put(secretId, new Token(token, now));
    return token;
  }
}
