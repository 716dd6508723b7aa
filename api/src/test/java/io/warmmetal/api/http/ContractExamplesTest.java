package io.warmmetal.api.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.json.schema.OutputUnit;
import io.vertx.junit5.VertxExtension;
import io.vertx.openapi.contract.MediaType;
import io.vertx.openapi.contract.OpenAPIContract;
import io.vertx.openapi.contract.Operation;
import io.vertx.openapi.contract.Response;
import io.warmmetal.api.WarmMetalApi;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.yaml.snakeyaml.Yaml;

/**
 * Every example in openapi.yaml validates against its schema, with the validator that checks the
 * server's traffic (vertx-openapi's schema repository), and every request body and JSON success
 * response has one: examples that drift from the schemas fail here instead of misleading a client
 * author.
 */
@ExtendWith(VertxExtension.class)
class ContractExamplesTest {
  private static final String RESOLVER_MARK = "__absolute_uri__";

  @Test
  void everyExampleValidatesAgainstItsSchema(Vertx vertx) {
    OpenAPIContract contract = OpenAPIContract.from(vertx, WarmMetalApi.CONTRACT).await();
    Map<String, Object> examples = new LinkedHashMap<>();
    Map<String, MediaType> mediaTypes = new LinkedHashMap<>();
    for (Operation op : contract.operations()) {
      mediaTypes(op)
          .forEach(
              (where, mt) -> {
                mediaTypes.put(where, mt);
                examplesOf(mt).forEach((name, value) -> examples.put(where + " " + name, value));
              });
    }
    assertThat(examples).as("examples found in the contract").hasSizeGreaterThan(40);
    List<String> invalid = new ArrayList<>();
    examples.forEach(
        (where, value) -> {
          MediaType mt = mediaTypes.get(where.substring(0, where.lastIndexOf(' ')));
          OutputUnit result =
              contract.getSchemaRepository().validator(mt.getSchema()).validate(value);
          if (!result.getValid()) {
            invalid.add(where + ": " + result.getErrors());
          }
        });
    assertThat(invalid).as("examples that do not validate against their schema").isEmpty();
  }

  @Test
  void everyRequestBodyAndJsonSuccessResponseHasAnExample(Vertx vertx) {
    OpenAPIContract contract = OpenAPIContract.from(vertx, WarmMetalApi.CONTRACT).await();
    List<String> missing = new ArrayList<>();
    for (Operation op : contract.operations()) {
      mediaTypes(op)
          .forEach(
              (where, mt) -> {
                boolean needsOne =
                    where.contains(" request ")
                        || (where.contains(" 2")
                            && !mt.getIdentifier().equals(MediaType.APPLICATION_OCTET_STREAM));
                if (needsOne && examplesOf(mt).isEmpty()) {
                  missing.add(where);
                }
              });
    }
    assertThat(missing).as("request bodies and success responses without an example").isEmpty();
  }

  /** The check above can fail: an example that breaks its schema is reported. */
  @Test
  void aBrokenExampleIsCaught(Vertx vertx) {
    OpenAPIContract contract = OpenAPIContract.from(vertx, WarmMetalApi.CONTRACT).await();
    MediaType instance =
        contract.operation("getInstance").getResponse(200).getContent().get("application/json");
    JsonObject example = ((JsonObject) examplesOf(instance).values().iterator().next()).copy();
    assertThat(
            contract
                .getSchemaRepository()
                .validator(instance.getSchema())
                .validate(example)
                .getValid())
        .isTrue();
    example.put("state", "sleeping");
    assertThat(
            contract
                .getSchemaRepository()
                .validator(instance.getSchema())
                .validate(example)
                .getValid())
        .isFalse();
  }

  /**
   * No key of either contract has an empty value outside examples: in a YAML flow mapping, unquoted
   * text with a comma (`{ description: A, B }`) silently ends at the comma and turns the rest into
   * such a key.
   */
  @Test
  void noStrayKeysFromCommasInUnquotedText(Vertx vertx) {
    for (String file : List.of(WarmMetalApi.CONTRACT, WarmMetalApi.AGENT_CONTRACT)) {
      List<String> stray = new ArrayList<>();
      strayKeys(vertx.fileSystem().readFileBlocking(file).toString(), stray);
      assertThat(stray)
          .as(file + ": keys with no value (a comma in unquoted flow text?)")
          .isEmpty();
    }
  }

  private static void strayKeys(String yaml, List<String> out) {
    JsonObject contract = new JsonObject(new Yaml().<Map<String, Object>>load(yaml));
    walk(contract, "", out);
  }

  private static void walk(Object node, String path, List<String> out) {
    if (node instanceof JsonObject object) {
      for (String key : object.fieldNames()) {
        Object value = object.getValue(key);
        if (value == null && !path.contains("/example")) {
          out.add(path + "/" + key);
        } else if (!key.equals("example") && !key.equals("examples")) {
          walk(value, path + "/" + key, out);
        }
      }
    } else if (node instanceof JsonArray array) {
      for (int i = 0; i < array.size(); i++) {
        walk(array.getValue(i), path + "/" + i, out);
      }
    }
  }

  /**
   * The operation's media types, request body and every response, keyed "operationId request|status
   * type".
   */
  private static Map<String, MediaType> mediaTypes(Operation op) {
    Map<String, MediaType> out = new LinkedHashMap<>();
    if (op.getRequestBody() != null) {
      op.getRequestBody()
          .getContent()
          .forEach((type, mt) -> out.put(op.getOperationId() + " request " + type, mt));
    }
    for (String status : op.getOpenAPIModel().getJsonObject("responses").fieldNames()) {
      if (!status.equals("default") && !status.matches("[1-5][0-9][0-9]")) {
        continue; // the resolver's bookkeeping (__absolute_uri__), not a status
      }
      Response response =
          status.equals("default")
              ? op.getDefaultResponse()
              : op.getResponse(Integer.parseInt(status));
      response
          .getContent()
          .forEach((type, mt) -> out.put(op.getOperationId() + " " + status + " " + type, mt));
    }
    return out;
  }

  /** A media type's `example` and each of its `examples` by name. */
  private static Map<String, Object> examplesOf(MediaType mt) {
    Map<String, Object> out = new LinkedHashMap<>();
    JsonObject model = mt.getOpenAPIModel();
    if (model.containsKey("example")) {
      out.put("example", plain(model.getValue("example")));
    }
    JsonObject named = model.getJsonObject("examples");
    if (named != null) {
      for (String name : named.fieldNames()) {
        out.put("examples/" + name, plain(named.getJsonObject(name).getValue("value")));
      }
    }
    return out;
  }

  /**
   * The example as written: the contract's resolver marks every object in it with
   * "__absolute_uri__".
   */
  private static Object plain(Object value) {
    if (value instanceof JsonObject object) {
      JsonObject copy = new JsonObject();
      object.forEach(
          e -> {
            if (!e.getKey().equals(RESOLVER_MARK)) {
              copy.put(e.getKey(), plain(e.getValue()));
            }
          });
      return copy;
    }
    if (value instanceof JsonArray array) {
      JsonArray copy = new JsonArray();
      array.forEach(item -> copy.add(plain(item)));
      return copy;
    }
    return value;
  }
}
