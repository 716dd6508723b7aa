package io.warmmetal.api.controller;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The RBAC rules shipped for the controller ({@code deploy/controller.yaml}), and whether they allow a request as
 * the Kubernetes API server would map it to (group, resource, verb, namespace).
 */
final class RbacRules {
  static final Path MANIFEST = Path.of("..", "deploy", "controller.yaml");
  private static final Pattern PATH = Pattern.compile(
      "/(?:api/v1|apis/([^/]+)/[^/]+)(?:/namespaces/([^/]+))?/([^/?]+)(?:/([^/?]+))?(?:/([^/?]+))?(\\?.*)?");

  private record Grant(String namespace, PolicyRule rule) {}

  private final List<Grant> grants = new ArrayList<>();

  static RbacRules shipped() throws Exception {
    RbacRules rules = new RbacRules();
    try (InputStream in = Files.newInputStream(MANIFEST)) {
      Object parsed = Serialization.unmarshal(in);
      List<HasMetadata> items = parsed instanceof List<?> docs ? docs.stream().map(HasMetadata.class::cast).toList()
          : parsed instanceof KubernetesList list ? list.getItems() : List.of((HasMetadata) parsed);
      for (HasMetadata item : items) {
        if (item instanceof ClusterRole role) {
          role.getRules().forEach(r -> rules.grants.add(new Grant(null, r)));
        } else if (item instanceof Role role) {
          role.getRules().forEach(r -> rules.grants.add(new Grant(role.getMetadata().getNamespace(), r)));
        }
      }
    }
    return rules;
  }

  /** What the request needs, as the API server's authorizer sees it: "group resource verb namespace". */
  static String need(String method, String path) {
    Matcher m = PATH.matcher(path);
    if (!m.matches()) {
      throw new IllegalArgumentException("not a resource path: " + path);
    }
    String group = m.group(1) == null ? "" : m.group(1);
    String namespace = m.group(2);
    String resource = m.group(3) + (m.group(5) == null ? "" : "/" + m.group(5));
    boolean named = m.group(4) != null;
    String query = m.group(6) == null ? "" : m.group(6);
    String verb = switch (method) {
      case "GET" -> named ? "get" : query.contains("watch=true") ? "watch" : "list";
      case "POST" -> "create";
      case "PUT" -> "update";
      case "PATCH" -> "patch";
      case "DELETE" -> named ? "delete" : "deletecollection";
      default -> method.toLowerCase();
    };
    return group + " " + resource + " " + verb + " " + (namespace == null ? "*" : namespace);
  }

  boolean allows(String need) {
    String[] n = need.split(" ");
    return grants.stream().anyMatch(g -> (g.namespace == null || g.namespace.equals(n[3]))
        && g.rule.getApiGroups().contains(n[0]) && g.rule.getResources().contains(n[1])
        && g.rule.getVerbs().contains(n[2]));
  }
}
