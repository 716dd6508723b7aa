package io.warmmetal.controller.karpenter;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * The hashes drift is judged by, as upstream's: a NodePool's template without its requirements
 * (requirements drift on their own terms), lists taken as sets and empty values as absent; a node
 * class's settings that shape a node (how it joins, its kubelet, its images) — not where the API is
 * or its credentials. A NodeClaim carries both from its launch; when they differ from the current
 * ones, it has drifted.
 */
public final class Hashes {
  /** On a NodeClaim: its NodePool's template hash at launch. */
  public static final String NODEPOOL_HASH_ANNOTATION = "karpenter.sh/nodepool-hash";

  public static final String NODEPOOL_HASH_VERSION_ANNOTATION =
      "karpenter.sh/nodepool-hash-version";

  /**
   * Bumped when what the hash covers changes, so claims made before are not all drifted at once
   * (upstream's v3).
   */
  public static final String NODEPOOL_HASH_VERSION = "v3";

  /** On a NodeClaim: its node class's hash at launch. */
  public static final String NODECLASS_HASH_ANNOTATION = "warmmetal.io/nodeclass-hash";

  private static final ObjectMapper JSON =
      new ObjectMapper().configure(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS, true);

  private Hashes() {}

  public static String nodePool(NodePool pool) {
    ObjectNode template = JSON.valueToTree(pool.getSpec().template);
    ((ObjectNode) template.path("spec")).remove("requirements");
    return hash(template);
  }

  /** The hash of any value, as its canonical JSON (for a node class's own hash). */
  public static String of(Object value) {
    return hash(JSON.valueToTree(value));
  }

  private static String hash(JsonNode node) {
    try {
      byte[] canonical = JSON.writeValueAsString(canonical(node)).getBytes(StandardCharsets.UTF_8);
      return HexFormat.of()
          .formatHex(MessageDigest.getInstance("SHA-256").digest(canonical))
          .substring(0, 16);
    } catch (JsonProcessingException | NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Keys sorted, empty and null values dropped, arrays sorted by their text (sets, as upstream
   * hashes them).
   */
  private static JsonNode canonical(JsonNode node) {
    if (node.isObject()) {
      ObjectNode out = JSON.createObjectNode();
      List<String> names = new ArrayList<>();
      node.fieldNames().forEachRemaining(names::add);
      names.sort(null);
      for (String name : names) {
        JsonNode value = canonical(node.get(name));
        if (!value.isNull()
            && !(value.isContainerNode() && value.isEmpty())
            && !(value.isTextual() && value.asText().isEmpty())) {
          out.set(name, value);
        }
      }
      return out;
    }
    if (node.isArray()) {
      List<JsonNode> items = new ArrayList<>();
      node.forEach(i -> items.add(canonical(i)));
      items.sort((a, b) -> a.toString().compareTo(b.toString()));
      ArrayNode out = JSON.createArrayNode();
      items.forEach(out::add);
      return out;
    }
    return node;
  }
}
