package io.warmmetal.api.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.junit5.VertxExtension;
import io.vertx.openapi.contract.OpenAPIContract;
import io.vertx.openapi.contract.Operation;
import io.vertx.openapi.validation.ResponseValidator;
import io.vertx.openapi.validation.ValidatableResponse;
import io.warmmetal.api.WarmMetalApi;
import io.warmmetal.api.testing.ApiFixture;
import java.io.InputStream;
import java.math.BigInteger;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.KeyPairGenerator;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.yaml.snakeyaml.Yaml;

/**
 * Every operation of openapi.yaml fuzzed from the contract: valid-ish and broken bodies, path and
 * query parameters, headers and tokens of every role. No answer may be a 5xx other than a 503
 * (capacity, service unavailable) or a power operation's 502 (the BMC, here nothing on loopback,
 * failed); every error has the error shape; every answer of an operation is one the contract
 * allows. Seeded ({@code -Dwarmmetal.fuzz.seed}, printed) and sized ({@code
 * -Dwarmmetal.fuzz.requests}, default 10,000) by system properties; only loopback is ever
 * addressed.
 */
@ExtendWith(VertxExtension.class)
class ContractFuzzTest {
  private static final long SEED = Long.getLong("warmmetal.fuzz.seed", 20_140_005L);
  private static final int REQUESTS = Integer.getInteger("warmmetal.fuzz.requests", 10_000);
  private static final int IN_FLIGHT = Integer.getInteger("warmmetal.fuzz.inflight", 16);
  private static final Set<String> ADDRESS_KEYS =
      Set.of("address", "wakeAddress", "host", "apiServer");
  private static final String[] LOOPBACK = {"127.0.0.1", "::1", "127.0.0.2", "localhost"};
  private static final String[] WEIRD_SEGMENTS = {
    "",
    ".",
    "..",
    "%2e%2e",
    "%2E",
    "%",
    "%zz",
    "%2F",
    "a%2Fb",
    "%00",
    "%C0%AF",
    "%ff%fe",
    "%E2%82",
    "null",
    "-1",
    "0",
    "99999999999999999999",
    "%20",
    "'%20OR%201=1",
    "%F0%9F%9A%80",
    "m-",
    "i-",
    "cmd-",
    "m-0000000000000000",
    "i-00000000000000000",
    "cmd-0000000000000000",
    "sshkey-0000000000000000",
    "M-ABCDEF0123456789",
    "..%2F..%2Fetc%2Fpasswd",
    "%2e%2e%2f",
    "a;b",
    "a:b",
    "~"
  };

  private final Random random = new Random(SEED);
  private final Map<String, Set<String>> seen = new ConcurrentHashMap<>();
  private final Set<String> protectedValues = ConcurrentHashMap.newKeySet();
  private final Map<String, String> tokens = new LinkedHashMap<>();
  private JsonObject spec;

  private record Op(
      String id,
      HttpMethod method,
      String path,
      JsonArray params,
      JsonObject body,
      String permission) {}

  private record Request(
      Op op,
      HttpMethod method,
      String uri,
      Map<String, String> headers,
      Buffer body,
      String describe) {}

  @Test
  void everyOperationFuzzedAnswersNo5xxAndOnlyTheErrorShape(Vertx vertx) throws Exception {
    System.out.printf(
        "contract fuzz: seed %d, %d requests (-Dwarmmetal.fuzz.seed, -Dwarmmetal.fuzz.requests)%n",
        SEED, REQUESTS);
    try (InputStream in =
        WarmMetalApi.class.getClassLoader().getResourceAsStream(WarmMetalApi.CONTRACT)) {
      spec = new JsonObject((Map<String, Object>) new Yaml().load(in));
    }
    List<Op> ops = operations();
    try (ApiFixture fx = ApiFixture.start(vertx)) {
      seed(fx);
      OpenAPIContract contract = OpenAPIContract.from(vertx, WarmMetalApi.CONTRACT).await();
      ResponseValidator validator = ResponseValidator.create(vertx, contract);
      WebClient http =
          WebClient.create(
              vertx,
              new WebClientOptions().setKeepAlive(true).setMaxHeaderSize(65536),
              new PoolOptions().setHttp1MaxSize(IN_FLIGHT));
      Map<Integer, AtomicInteger> statuses = new TreeMap<>();
      Map<String, AtomicInteger> perOp = new TreeMap<>();
      List<String> failures = new CopyOnWriteArrayList<>();
      AtomicInteger unsendable = new AtomicInteger();
      long start = System.nanoTime();
      for (int done = 0; done < REQUESTS; ) {
        List<Future<?>> window = new ArrayList<>();
        Map<Future<?>, Request> windowRequests = new HashMap<>();
        for (int i = 0; i < IN_FLIGHT && done < REQUESTS; i++, done++) {
          Op op = ops.get(random.nextInt(ops.size()));
          Request req = request(op);
          perOp.computeIfAbsent(op.id(), k -> new AtomicInteger()).incrementAndGet();
          Future<HttpResponse<Buffer>> sent;
          try {
            var r =
                http.request(req.method(), fx.api.port(), "127.0.0.1", req.uri()).timeout(20_000);
            req.headers().forEach(r::putHeader);
            sent = req.body() == null ? r.send() : r.sendBuffer(req.body());
          } catch (RuntimeException e) {
            unsendable
                .incrementAndGet(); // the client itself refuses it (e.g. a control character in a
            // header)
            continue;
          }
          Future<?> outcome =
              sent.compose(
                  resp -> {
                    statuses
                        .computeIfAbsent(resp.statusCode(), k -> new AtomicInteger())
                        .incrementAndGet();
                    String problem = check(req, resp);
                    if (problem != null) {
                      failures.add(
                          problem
                              + "\n    "
                              + req.describe()
                              + "\n    -> "
                              + resp.statusCode()
                              + " "
                              + abbreviate(resp.bodyAsString()));
                    }
                    harvest(req, resp);
                    return contractCheck(contract, validator, req, resp)
                        .onSuccess(
                            p -> {
                              if (p != null) {
                                failures.add(p + "\n    " + req.describe());
                              }
                            });
                  },
                  err -> {
                    if (err instanceof TimeoutException) {
                      failures.add("no answer within 20 s\n    " + req.describe());
                    }
                    unsendable.incrementAndGet();
                    return Future.succeededFuture();
                  });
          window.add(outcome);
          windowRequests.put(outcome, req);
        }
        Future.join(window).timeout(60, TimeUnit.SECONDS).otherwiseEmpty().await();
        windowRequests.forEach(
            (f, req) -> {
              if (!f.isComplete()) {
                failures.add("never completed\n    " + req.describe());
              }
            });
        if (windowRequests.keySet().stream().anyMatch(f -> !f.isComplete())) {
          break;
        }
      }
      long elapsed = (System.nanoTime() - start) / 1_000_000;
      System.out.printf(
          "contract fuzz: %d requests over %d operations in %d ms (%d the client would not send);"
              + " statuses %s%n",
          REQUESTS, ops.size(), elapsed, unsendable.get(), statuses);
      System.out.printf("contract fuzz: per operation %s%n", perOp);
      failures.stream()
          .limit(20)
          .forEach(f -> System.out.println("FUZZ FAILURE (seed " + SEED + "): " + f));
      assertThat(failures)
          .as(
              "seed %d: %d failures, first: %s",
              SEED, failures.size(), failures.isEmpty() ? "" : failures.get(0))
          .isEmpty();
      assertThat(perOp.keySet())
          .as("every operation was fuzzed")
          .containsAll(ops.stream().map(Op::id).toList());
      // The server is still well: it answers a plain read.
      assertThat(fx.client.get("/v1/shapes", ApiFixture.ADMIN).status()).isEqualTo(200);
    }
  }

  // ---------------------------------------------------------------------------------------------------------------
  // What is allowed

  private static String check(Request req, HttpResponse<Buffer> resp) {
    int status = resp.statusCode();
    JsonObject body = null;
    String raw = resp.bodyAsString();
    if (status >= 400 && req.method() != HttpMethod.HEAD) { // a HEAD answer has no body
      try {
        body = new JsonObject(raw == null ? "" : raw);
      } catch (RuntimeException e) {
        return "error without a JSON body";
      }
      if (!(body.getValue("code") instanceof String)
          || !(body.getValue("message") instanceof String)) {
        return "error without the error shape (code, message)";
      }
    }
    if (status >= 500) {
      String code = body.getString("code");
      boolean capacity =
          status == 503 && Set.of("InsufficientCapacity", "ServiceUnavailable").contains(code);
      boolean bmc =
          status == 502
              && "RemoteFailure".equals(code)
              && req.op() != null
              && req.op().id().startsWith("power");
      if (!capacity && !bmc) {
        return "server error " + status;
      }
    }
    if (status == 200 && req.op() != null && req.op().id().equals("getBootFile")) {
      return "a boot file served, but the boot directory is empty";
    }
    return null;
  }

  private static Future<String> contractCheck(
      OpenAPIContract contract,
      ResponseValidator validator,
      Request req,
      HttpResponse<Buffer> resp) {
    String path =
        req.uri().contains("?") ? req.uri().substring(0, req.uri().indexOf('?')) : req.uri();
    Operation op;
    try {
      op = contract.findOperation(path, req.method());
    } catch (RuntimeException e) {
      op = null;
    }
    for (String segment : path.split("/", -1)) {
      String decoded = segment.replace("%2e", ".").replace("%2E", ".");
      if (decoded.equals(".") || decoded.equals("..")) {
        return Future
            .succeededFuture(); // the server normalizes dot segments: another operation's answer
      }
    }
    String type = resp.getHeader("Content-Type");
    if (op == null
        || resp.statusCode() == 405
        || resp.statusCode() == 413
        || req.method() == HttpMethod.HEAD
        || (type != null && !type.startsWith("application/json"))) {
      return Future
          .succeededFuture(); // not an operation's answer (a broken path may leave every route), or
      // not JSON
    }
    String operationId = op.getOperationId();
    Map<String, String> headers = new HashMap<>();
    resp.headers().forEach(h -> headers.put(h.getKey(), h.getValue()));
    ValidatableResponse v =
        resp.body() == null || resp.body().length() == 0
            ? ValidatableResponse.create(resp.statusCode(), headers)
            : ValidatableResponse.create(
                resp.statusCode(), headers, resp.body(), resp.getHeader("Content-Type"));
    try {
      return validator
          .validate(v, operationId)
          .map(x -> (String) null)
          .recover(
              err ->
                  Future.succeededFuture(
                      "answer "
                          + resp.statusCode()
                          + " outside the contract of "
                          + operationId
                          + ": "
                          + err.getMessage()));
    } catch (RuntimeException e) {
      return Future.succeededFuture(
          "answer "
              + resp.statusCode()
              + " outside the contract of "
              + operationId
              + ": "
              + e.getMessage());
    }
  }

  private static String abbreviate(String s) {
    return s == null ? "" : s.length() > 400 ? s.substring(0, 400) + "…" : s;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // The world the fuzz acts on

  private void seed(ApiFixture fx) throws Exception {
    fx.client.put("/v1/projects/fuzz-a", ApiFixture.ADMIN, new JsonObject());
    tokens.put("admin", ApiFixture.ADMIN);
    for (String role : List.of("client", "read-only", "fleet-reader", "boot")) {
      tokens.put(role, fx.token(role));
    }
    tokens.put("client@fuzz-a", fx.token("client", "fuzz-a"));
    tokens.put("none", null);
    tokens.put("garbage", "not-a-token-at-all");
    fx.client
        .get("/v1/tokens", ApiFixture.ADMIN)
        .body()
        .getJsonArray("items", new JsonArray())
        .forEach(t -> protectedValues.add(((JsonObject) t).getString("id")));
    fx.registerMachines(40, ApiFixture.facts(8, 32), true);
    fx.registerMachines(10, ApiFixture.gpuFacts(32, 256, 2, "H100"), true);
    fx.client.put(
        "/v1/pools/x86-8c-32g",
        ApiFixture.ADMIN,
        new JsonObject().put("minWarm", 2).put("maxWarm", 40));
    for (int i = 0; i < 4; i++) {
      fx.client.post(
          "/v1/instances", tokens.get("client"), new JsonObject().put("shape", "x86-8c-32g"));
    }
    fx.client.post("/v1/enrollment-tokens", ApiFixture.ADMIN, new JsonObject());
    var keys = KeyPairGenerator.getInstance("RSA");
    keys.initialize(2048);
    String pem =
        "-----BEGIN PRIVATE KEY-----\n"
            + Base64.getMimeEncoder(64, "\n".getBytes())
                .encodeToString(keys.generateKeyPair().getPrivate().getEncoded())
            + "\n-----END PRIVATE KEY-----\n";
    fx.client.post(
        "/v1/ssh-keys",
        ApiFixture.ADMIN,
        new JsonObject().put("name", "fuzz").put("privateKey", pem));
    // Learn every id there is from the lists, as the fuzz will from its answers.
    for (String list :
        List.of(
            "/v1/machines",
            "/v1/instances",
            "/v1/shapes",
            "/v1/pools",
            "/v1/tokens",
            "/v1/projects",
            "/v1/enrollment-tokens",
            "/v1/ssh-keys",
            "/v1/events",
            "/v1/ssh-enrollments")) {
      var r = fx.client.get(list, ApiFixture.ADMIN);
      learn(
          list,
          r.body() != null ? r.body() : new JsonObject().put("items", new JsonArray(r.raw())));
    }
    for (String m : List.copyOf(seen.getOrDefault("machineId", Set.of()))) {
      learn(
          "/v1/machines/" + m + "/commands",
          fx.client.get("/v1/machines/" + m + "/commands", ApiFixture.ADMIN).body());
    }
    System.out.printf(
        "contract fuzz: known ids %s%n",
        seen.entrySet().stream()
            .map(e -> e.getKey() + "=" + e.getValue().size())
            .sorted()
            .toList());
  }

  private void harvest(Request req, HttpResponse<Buffer> resp) {
    if (resp.statusCode() < 300 && req.op() != null && resp.body() != null) {
      try {
        Object json = Json.decodeValue(resp.body());
        learn(req.op().path(), json);
      } catch (RuntimeException ignored) {
        // not JSON (the iPXE script)
      }
    }
  }

  /**
   * Records every string value under its key, and an "id" also under the path parameter it fills.
   */
  private void learn(String path, Object json) {
    if (json instanceof JsonObject o) {
      o.forEach(
          e -> {
            if (e.getValue() instanceof String s && s.length() < 200) {
              String key = e.getKey();
              if (key.equals("id") || key.equals("name")) {
                key = idParameter(path, s);
              }
              if (key != null) {
                seen.computeIfAbsent(key, k -> ConcurrentHashMap.newKeySet()).add(s);
              }
            } else {
              learn(path, e.getValue());
            }
          });
    } else if (json instanceof JsonArray a) {
      a.forEach(x -> learn(path, x));
    }
  }

  private static String idParameter(String path, String value) {
    if (value.startsWith("m-")) {
      return "machineId";
    }
    if (value.startsWith("i-")) {
      return "instanceId";
    }
    if (value.startsWith("cmd-")) {
      return "commandId";
    }
    if (value.startsWith("sshkey-")) {
      return "keyId";
    }
    if (path.startsWith("/v1/shapes") || path.startsWith("/v1/pools")) {
      return "shape";
    }
    if (path.startsWith("/v1/projects")) {
      return "project";
    }
    if (path.startsWith("/v1/tokens") || path.startsWith("/v1/enrollment-tokens")) {
      return "tokenId";
    }
    if (path.startsWith("/v1/ssh-enrollments") || path.startsWith("/v1/machines/enroll-ssh")) {
      return "enrollmentId";
    }
    return null;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // The contract

  private List<Op> operations() {
    List<Op> ops = new ArrayList<>();
    spec.getJsonObject("paths")
        .forEach(
            p -> {
              JsonObject item = (JsonObject) p.getValue();
              JsonArray shared = item.getJsonArray("parameters", new JsonArray());
              for (String m : List.of("get", "post", "put", "patch", "delete")) {
                JsonObject op = item.getJsonObject(m);
                if (op == null) {
                  continue;
                }
                JsonArray params = new JsonArray();
                shared.forEach(x -> params.add(resolve(x)));
                op.getJsonArray("parameters", new JsonArray()).forEach(x -> params.add(resolve(x)));
                JsonObject body = null;
                if (op.containsKey("requestBody")) {
                  body =
                      resolve(
                          resolve(op.getValue("requestBody"))
                              .getJsonObject("content")
                              .getJsonObject("application/json")
                              .getValue("schema"));
                }
                ops.add(
                    new Op(
                        op.getString("operationId"),
                        HttpMethod.valueOf(m.toUpperCase()),
                        p.getKey(),
                        params,
                        body,
                        op.getString("x-warmmetal-permission")));
              }
            });
    return ops;
  }

  private JsonObject resolve(Object node) {
    JsonObject o = (JsonObject) node;
    while (o.containsKey("$ref")) {
      JsonObject at = spec;
      for (String part : o.getString("$ref").substring(2).split("/")) {
        at = at.getJsonObject(part);
      }
      o = at;
    }
    return o;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Requests

  private Request request(Op op) {
    HttpMethod method = op.method();
    if (random.nextInt(100) == 0) {
      method =
          List.of(
                  HttpMethod.GET,
                  HttpMethod.POST,
                  HttpMethod.PUT,
                  HttpMethod.DELETE,
                  HttpMethod.PATCH,
                  HttpMethod.HEAD,
                  HttpMethod.OPTIONS)
              .get(random.nextInt(7));
    }
    StringBuilder uri = new StringBuilder();
    for (String segment : op.path().split("/", -1)) {
      if (!uri.isEmpty() || !segment.isEmpty()) {
        uri.append('/');
      }
      if (segment.startsWith("{")) {
        uri.append(pathValue(segment.substring(1, segment.length() - 1), parameter(op, segment)));
      } else {
        uri.append(segment);
      }
    }
    if (uri.isEmpty()) {
      uri.append('/');
    }
    if (random.nextInt(40) == 0) {
      uri.append(random.nextBoolean() ? "/" : random.nextBoolean() ? "/.." : "/%2e");
    }
    List<String> query = new ArrayList<>();
    Map<String, String> headers = new LinkedHashMap<>();
    for (Object p : op.params()) {
      JsonObject param = (JsonObject) p;
      String in = param.getString("in");
      if (in.equals("query") && random.nextInt(3) > 0) {
        query.add(param.getString("name") + "=" + queryValue(param));
      } else if (in.equals("header") && random.nextInt(3) > 0) {
        String v = headerValue(param);
        if (v != null) {
          headers.put(param.getString("name"), v);
        }
      }
    }
    if (random.nextInt(15) == 0) {
      query.add(
          pick("x", "limit", "cursor", "state", "since", "labelSelector", "%", "a%zz")
              + "="
              + pick("", "1", "%zz", "-1", "%00", "true", "x".repeat(3000), "%E2%82"));
    }
    if (!query.isEmpty()) {
      uri.append('?').append(String.join("&", query));
    }
    String role = random.nextInt(5) < 2 ? "admin" : pick(tokens.keySet().toArray(String[]::new));
    String token = tokens.get(role);
    if (token != null) {
      headers.put(
          "Authorization",
          random.nextInt(30) == 0
              ? "Basic " + Base64.getEncoder().encodeToString((":" + token).getBytes())
              : "Bearer " + token);
    }
    if (!headers.containsKey("WarmMetal-Project") && random.nextInt(6) == 0) {
      headers.put(
          "WarmMetal-Project",
          pick("default", "fuzz-a", "nope", "BAD NAME", "", "-", "x".repeat(70), "%zz", "défaut"));
    }
    Buffer body = null;
    String bodyText = null;
    if (op.body() != null || random.nextInt(20) == 0) {
      bodyText = body(op);
      if (bodyText != null) {
        body = Buffer.buffer(bodyText);
        headers.put(
            "Content-Type",
            random.nextInt(25) == 0
                ? pick(
                    "text/plain",
                    "application/xml",
                    "application/json; charset=utf-16",
                    "application/x-www-form-urlencoded",
                    "")
                : "application/json");
        if (random.nextInt(200) == 0) {
          body =
              Buffer.buffer(
                  new byte[] {'{', '"', (byte) 0xC3, (byte) 0x28, '"', ':', '1', '}'}); // bad UTF-8
        }
      }
    }
    String describe =
        method
            + " "
            + uri
            + " as "
            + role
            + " headers "
            + headers.keySet()
            + " "
            + headers.getOrDefault("WarmMetal-Project", "")
            + " body "
            + abbreviate(bodyText);
    return new Request(op, method, uri.toString(), headers, body, describe);
  }

  private JsonObject parameter(Op op, String segment) {
    String name = segment.substring(1, segment.length() - 1);
    for (Object p : op.params()) {
      if (((JsonObject) p).getString("name").equals(name)) {
        return (JsonObject) p;
      }
    }
    return new JsonObject().put("schema", new JsonObject().put("type", "string"));
  }

  private String pathValue(String name, JsonObject param) {
    int dice = random.nextInt(10);
    List<String> known = new ArrayList<>(seen.getOrDefault(name, Set.of()));
    known.removeAll(protectedValues);
    if (dice < 6 && !known.isEmpty()) {
      return encode(known.get(random.nextInt(known.size())));
    }
    if (dice < 8) {
      Object v = value(resolve(param.getValue("schema")), name, 0);
      return v == null ? "x" : encode(String.valueOf(v));
    }
    return pick(WEIRD_SEGMENTS);
  }

  private String queryValue(JsonObject param) {
    int dice = random.nextInt(10);
    if (dice < 6) {
      Object v = value(resolve(param.getValue("schema")), param.getString("name"), 0);
      return encode(String.valueOf(v));
    }
    return pick(WEIRD_SEGMENTS);
  }

  private String headerValue(JsonObject param) {
    if (random.nextInt(3) > 0) {
      Object v = value(resolve(param.getValue("schema")), param.getString("name"), 0);
      return String.valueOf(v);
    }
    return pick("default", "fuzz-a", "nope", "BAD NAME", "", "x".repeat(300), "défaut", "null");
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
  }

  private String body(Op op) {
    int dice = random.nextInt(20);
    if (op.body() == null || dice == 0) {
      return pick(
          "",
          "{",
          "[]",
          "null",
          "\"x\"",
          "123",
          "{}",
          "{\"a\":",
          "[".repeat(2000),
          "{\"a\":1,\"a\":2}",
          "{\"\\ud800\":1}",
          "\"\\ud800\"",
          "{\"x\":\"\\u0000\"}",
          "true",
          " ",
          "{}".repeat(3));
    }
    Object valid = value(op.body(), null, 0);
    if (dice < 6 || !(valid instanceof JsonObject obj)) {
      return Json.encode(loopbackOnly(valid));
    }
    int mutations = 1 + random.nextInt(3);
    for (int i = 0; i < mutations; i++) {
      mutate(obj);
    }
    loopbackOnly(obj);
    String text = obj.encode();
    if (random.nextInt(40) == 0) {
      text = text.replace("\"", "\"\\ud83d"); // unpaired surrogates everywhere
    }
    return text;
  }

  /**
   * Keeps whatever the server may connect to on loopback: an address that is a string is a loopback
   * one (other types stay, the validator refuses them), and power settings name a loopback wake
   * address (the default broadcasts).
   */
  private Object loopbackOnly(Object node) {
    if (node instanceof JsonObject o) {
      if (o.containsKey("driver") && !o.containsKey("wakeAddress")) {
        o.put("wakeAddress", "127.0.0.1");
      }
      for (String k : o.fieldNames()) {
        Object v = o.getValue(k);
        if (ADDRESS_KEYS.contains(k) && v instanceof String a && !List.of(LOOPBACK).contains(a)) {
          o.put(k, a.length() > 253 ? a : pick(LOOPBACK));
        } else {
          loopbackOnly(v);
        }
      }
    } else if (node instanceof JsonArray a) {
      a.forEach(this::loopbackOnly);
    }
    return node;
  }

  private void mutate(JsonObject root) {
    List<Object[]> slots = new ArrayList<>(); // {container, key or index}
    collect(root, slots);
    int kind = random.nextInt(4);
    if (kind == 0 && !slots.isEmpty()) {
      Object[] slot = slots.get(random.nextInt(slots.size()));
      if (slot[0] instanceof JsonObject o) {
        o.remove((String) slot[1]);
      } else {
        ((JsonArray) slot[0]).remove((int) slot[1]);
      }
      return;
    }
    if (kind == 1 || slots.isEmpty()) {
      root.put(
          pick("extra", "id", "state", "project", "", "x".repeat(300), "ü", "__proto__"), weird());
      return;
    }
    Object[] slot = slots.get(random.nextInt(slots.size()));
    if (slot[0] instanceof JsonObject o) {
      o.put((String) slot[1], weird());
    } else {
      ((JsonArray) slot[0]).set((int) slot[1], weird());
    }
  }

  private static void collect(Object node, List<Object[]> slots) {
    if (node instanceof JsonObject o) {
      for (String k : o.fieldNames()) {
        slots.add(new Object[] {o, k});
        collect(o.getValue(k), slots);
      }
    } else if (node instanceof JsonArray a) {
      for (int i = 0; i < a.size(); i++) {
        slots.add(new Object[] {a, i});
        collect(a.getValue(i), slots);
      }
    }
  }

  private Object weird() {
    return switch (random.nextInt(22)) {
      case 0 -> null;
      case 1 -> "";
      case 2 -> "x".repeat(1 + random.nextInt(20_000));
      case 3 -> "ünïcødé 🚀 \u202e ☃ \u0000 ";
      case 4 -> -1;
      case 5 -> 0;
      case 6 -> Integer.MAX_VALUE;
      case 7 -> 2_147_483_648L;
      case 8 -> Long.MAX_VALUE;
      case 9 -> Long.MIN_VALUE;
      case 10 -> 1e308;
      case 11 -> -1e308;
      case 12 -> 0.5;
      case 13 -> true;
      case 14 -> new JsonArray();
      case 15 -> new JsonObject();
      case 16 -> new JsonArray().add(new JsonObject().put("a", new JsonArray().add(1)));
      case 17 -> new BigInteger("123456789012345678901234567890");
      case 18 -> "NaN";
      case 19 -> "1970-01-01T00:00:00Z";
      case 20 -> "../../etc/passwd";
      default -> "%s%n%x' OR '1'='1";
    };
  }

  /** A valid-ish value of a schema (known ids where the name says which). */
  private Object value(JsonObject schema, String name, int depth) {
    if (schema == null) {
      return "x";
    }
    schema = resolve(schema);
    if (name != null) {
      List<String> known = new ArrayList<>(seen.getOrDefault(name, Set.of()));
      known.removeAll(protectedValues);
      if (!known.isEmpty() && random.nextInt(3) > 0 && typeOf(schema).equals("string")) {
        return known.get(random.nextInt(known.size()));
      }
      if (ADDRESS_KEYS.contains(name)) {
        return pick(LOOPBACK); // nothing beyond loopback is ever addressed, nor a name looked up
      }
    }
    if (schema.containsKey("allOf")) {
      JsonObject merged = new JsonObject();
      for (Object part : schema.getJsonArray("allOf")) {
        Object v = value((JsonObject) part, name, depth);
        if (v instanceof JsonObject o) {
          merged.mergeIn(o);
        } else {
          return v;
        }
      }
      return merged;
    }
    if (schema.containsKey("enum")) {
      JsonArray values = schema.getJsonArray("enum");
      return values.getValue(random.nextInt(values.size()));
    }
    if (schema.containsKey("default") && random.nextInt(8) == 0) {
      return schema.getValue("default");
    }
    switch (typeOf(schema)) {
      case "object" -> {
        JsonObject o = new JsonObject();
        if (depth > 5) {
          return o;
        }
        JsonObject props = schema.getJsonObject("properties", new JsonObject());
        List<String> required =
            schema.getJsonArray("required", new JsonArray()).stream().map(String::valueOf).toList();
        for (String p : props.fieldNames()) {
          if (required.contains(p) || random.nextInt(3) == 0) {
            o.put(p, value(props.getJsonObject(p), p, depth + 1));
          }
        }
        Object extra = schema.getValue("additionalProperties");
        if (props.isEmpty() && extra instanceof JsonObject valueSchema) {
          JsonObject keySchema = schema.getJsonObject("propertyNames");
          for (int i = random.nextInt(3); i > 0; i--) {
            Object key = keySchema == null ? "k" + i : value(keySchema, null, depth + 1);
            o.put(String.valueOf(key), value(valueSchema, null, depth + 1));
          }
        }
        return o;
      }
      case "array" -> {
        JsonArray a = new JsonArray();
        int min = schema.getInteger("minItems", 0);
        int max = Math.min(schema.getInteger("maxItems", min + 3), min + 3);
        for (int i = min + random.nextInt(max - min + 1); i > 0; i--) {
          a.add(
              value(
                  schema.getJsonObject("items"), name == null ? null : singular(name), depth + 1));
        }
        return a;
      }
      case "integer" -> {
        long min = schema.getLong("minimum", 0L);
        long max = schema.getLong("maximum", min + 100);
        if (random.nextInt(4) == 0) {
          return random.nextBoolean() ? min : max;
        }
        return min + (long) (random.nextDouble() * (max - min + 1));
      }
      case "number" -> {
        return random.nextDouble() * 100;
      }
      case "boolean" -> {
        return random.nextBoolean();
      }
      case "null" -> {
        return null;
      }
      default -> {
        if (schema.containsKey("pattern")) {
          String s = Patterns.sample(schema.getString("pattern"), random);
          if (s != null) {
            return s;
          }
        }
        if ("date-time".equals(schema.getString("format"))) {
          return Instant.now().toString();
        }
        int min = schema.getInteger("minLength", 1);
        int max = Math.min(schema.getInteger("maxLength", min + 16), min + 16);
        StringBuilder s = new StringBuilder();
        for (int i = min + random.nextInt(max - min + 1); i > 0; i--) {
          s.append((char) ('a' + random.nextInt(26)));
        }
        return s.toString();
      }
    }
  }

  private static String singular(String name) {
    return name.endsWith("s") ? name.substring(0, name.length() - 1) : name;
  }

  private static String typeOf(JsonObject schema) {
    Object type = schema.getValue("type");
    if (type instanceof JsonArray types) {
      return types.stream()
          .map(String::valueOf)
          .filter(t -> !t.equals("null"))
          .findFirst()
          .orElse("null");
    }
    if (type == null) {
      return schema.containsKey("properties") ? "object" : "string";
    }
    return (String) type;
  }

  @SafeVarargs
  private <T> T pick(T... values) {
    return values[random.nextInt(values.length)];
  }
}
