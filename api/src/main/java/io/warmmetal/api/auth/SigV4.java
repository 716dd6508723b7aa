package io.warmmetal.api.auth;

import io.vertx.core.MultiMap;
import io.warmmetal.api.auth.SignatureFailure.Code;
import io.warmmetal.api.crypto.Ids;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.format.ResolverStyle;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * AWS Signature Version 4 (AWS4-HMAC-SHA256) as a server checks it, in the Authorization header or
 * in a pre-signed URL's query. {@link #parse} reads what a signature claims (who, which scope,
 * when, over which headers) without any secret; {@link #check} holds it to a service and the clock;
 * {@link #verify} recomputes the signature with the access key's secret — CPU work over the whole
 * body, for a worker thread. The canonical request is AWS's for services other than S3: the path
 * normalised and encoded a second time, the query sorted, the signed headers' values trimmed.
 */
final class SigV4 {
  static final String ALGORITHM = "AWS4-HMAC-SHA256";

  /**
   * How far a request's X-Amz-Date may be from this replica's clock, either way: AWS's bound. A
   * pre-signed URL may be older (up to its X-Amz-Expires), never further ahead.
   */
  static final Duration MAX_SKEW = Duration.ofMinutes(15);

  /** The longest X-Amz-Expires of a pre-signed URL, as AWS: seven days. */
  static final long MAX_EXPIRES_SECONDS = Duration.ofDays(7).toSeconds();

  static final String UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD";

  private static final String TERMINATOR = "aws4_request";
  private static final String SIGNATURE_PARAM = "X-Amz-Signature";
  private static final List<String> PRESIGN_PARAMS =
      List.of(
          "X-Amz-Algorithm",
          "X-Amz-Credential",
          "X-Amz-Date",
          "X-Amz-Expires",
          "X-Amz-SignedHeaders",
          SIGNATURE_PARAM);
  private static final Pattern AMZ_DATE_SHAPE = Pattern.compile("\\d{8}T\\d{6}Z");
  private static final DateTimeFormatter AMZ_DATE =
      DateTimeFormatter.ofPattern("uuuuMMdd'T'HHmmss'Z'").withResolverStyle(ResolverStyle.STRICT);
  private static final Pattern SIGNATURE_SHAPE = Pattern.compile("[0-9a-f]{64}");
  private static final Pattern EXPIRES_SHAPE = Pattern.compile("\\d{1,7}");
  private static final Pattern WHITESPACE = Pattern.compile("\\s+");
  private static final HexFormat HEX = HexFormat.of();
  private static final HexFormat HEX_UPPER = HexFormat.of().withUpperCase();
  private static final String WHAT_A_HEADER_IS =
      "the Authorization header must be AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…,"
          + " Signature=…";

  private SigV4() {}

  /**
   * What a signature claims. {@code date} is the credential scope's (YYYYMMDD), {@code amzDate} the
   * request's X-Amz-Date as sent; {@code expiresSeconds} is a pre-signed URL's X-Amz-Expires (0 for
   * a signed header).
   */
  record Claim(
      String accessKeyId,
      String date,
      String region,
      String service,
      String amzDate,
      Instant signedAt,
      List<String> signedHeaders,
      String signature,
      boolean presigned,
      long expiresSeconds) {
    String scope() {
      return date + "/" + region + "/" + service + "/" + TERMINATOR;
    }
  }

  /** One query parameter: decoded (to read X-Amz-…) and in its canonical encoding. */
  private record Param(String name, String value, String canonicalName, String canonicalValue) {}

  /** Reads the signature's claim; fails with {@link SignatureFailure} if it is absent or bad. */
  static Claim parse(SignedRequest request) {
    String authorization = request.headers().get("Authorization");
    Map<String, List<String>> query = new HashMap<>();
    for (Param p : queryParams(request.rawQuery())) {
      query.computeIfAbsent(p.name(), k -> new ArrayList<>()).add(p.value());
    }
    // Any of these says the query carries the signature; X-Amz-Date alone may be a parameter.
    boolean presigned =
        Stream.of("X-Amz-Algorithm", "X-Amz-Credential", SIGNATURE_PARAM)
            .anyMatch(query::containsKey);
    if (authorization == null && !presigned) {
      throw new SignatureFailure(
          Code.MissingAuthenticationToken,
          "the request is not signed: it needs an Authorization header (AWS Signature Version 4)"
              + " or a pre-signed query (X-Amz-Algorithm, X-Amz-Credential, …)");
    }
    if (authorization != null && presigned) {
      throw new SignatureFailure(
          Code.IncompleteSignature,
          "a request is signed in its Authorization header or in its query (X-Amz-…), not both");
    }
    if (request.headers().contains("X-Amz-Security-Token")
        || query.containsKey("X-Amz-Security-Token")) {
      // Temporary credentials are STS's; no WarmMetal key has a session token.
      throw new SignatureFailure(
          Code.InvalidParameterValue,
          "X-Amz-Security-Token is not accepted: WarmMetal issues no temporary credentials");
    }
    return authorization != null ? fromHeader(authorization, request.headers()) : fromQuery(query);
  }

  private static Claim fromHeader(String authorization, MultiMap headers) {
    String value = authorization.trim();
    int space = value.indexOf(' ');
    if (space < 0 || !value.substring(0, space).equals(ALGORITHM)) {
      // The header is not echoed: it may be some other scheme's secret.
      throw new SignatureFailure(Code.IncompleteSignature, WHAT_A_HEADER_IS);
    }
    Map<String, String> parts = new HashMap<>();
    for (String part : value.substring(space + 1).split(",")) {
      String p = part.trim();
      int eq = p.indexOf('=');
      if (eq <= 0 || parts.put(p.substring(0, eq).trim(), p.substring(eq + 1).trim()) != null) {
        throw new SignatureFailure(Code.IncompleteSignature, WHAT_A_HEADER_IS);
      }
    }
    for (String required : List.of("Credential", "SignedHeaders", "Signature")) {
      if (!parts.containsKey(required)) {
        throw new SignatureFailure(
            Code.IncompleteSignature,
            "the Authorization header has no " + required + " (" + WHAT_A_HEADER_IS + ")");
      }
    }
    String amzDate = headers.get("X-Amz-Date");
    if (amzDate == null) {
      throw new SignatureFailure(
          Code.IncompleteSignature, "a signed request needs an X-Amz-Date header");
    }
    return claim(
        parts.get("Credential"),
        amzDate.trim(),
        parts.get("SignedHeaders"),
        parts.get("Signature"),
        false,
        0);
  }

  private static Claim fromQuery(Map<String, List<String>> query) {
    for (String name : PRESIGN_PARAMS) {
      List<String> values = query.get(name);
      if (values == null || values.size() != 1) {
        throw new SignatureFailure(
            Code.IncompleteSignature,
            "a pre-signed request needs "
                + name
                + " once in its query (with "
                + String.join(", ", PRESIGN_PARAMS)
                + ")");
      }
    }
    if (!ALGORITHM.equals(query.get("X-Amz-Algorithm").get(0))) {
      throw new SignatureFailure(Code.IncompleteSignature, "X-Amz-Algorithm must be " + ALGORITHM);
    }
    String expires = query.get("X-Amz-Expires").get(0);
    long seconds = EXPIRES_SHAPE.matcher(expires).matches() ? Long.parseLong(expires) : -1;
    if (seconds < 1 || seconds > MAX_EXPIRES_SECONDS) {
      throw new SignatureFailure(
          Code.InvalidParameterValue,
          "X-Amz-Expires must be whole seconds from 1 to " + MAX_EXPIRES_SECONDS + " (7 days)");
    }
    return claim(
        query.get("X-Amz-Credential").get(0),
        query.get("X-Amz-Date").get(0),
        query.get("X-Amz-SignedHeaders").get(0),
        query.get(SIGNATURE_PARAM).get(0),
        true,
        seconds);
  }

  private static Claim claim(
      String credential,
      String amzDate,
      String signedHeaders,
      String signature,
      boolean presigned,
      long expiresSeconds) {
    String[] scope = credential.split("/", -1);
    if (scope.length != 5 || List.of(scope).contains("")) {
      throw new SignatureFailure(
          Code.IncompleteSignature,
          "the Credential must be ACCESS_KEY_ID/YYYYMMDD/REGION/SERVICE/aws4_request");
    }
    if (!TERMINATOR.equals(scope[4])) {
      throw new SignatureFailure(
          Code.SignatureDoesNotMatch,
          "the Credential should be scoped with a valid terminator: 'aws4_request'");
    }
    Instant signedAt = amzDate(amzDate);
    if (!scope[1].equals(amzDate.substring(0, 8))) {
      throw new SignatureFailure(
          Code.SignatureDoesNotMatch,
          "the Credential's date ("
              + scope[1]
              + ") does not match X-Amz-Date's ("
              + amzDate.substring(0, 8)
              + ")");
    }
    List<String> headers = List.of(signedHeaders.split(";", -1));
    for (int i = 0; i < headers.size(); i++) {
      String h = headers.get(i);
      if (h.isEmpty()
          || !h.equals(h.toLowerCase(Locale.ROOT))
          || (i > 0 && headers.get(i - 1).compareTo(h) >= 0)) {
        throw new SignatureFailure(
            Code.IncompleteSignature,
            "SignedHeaders must be lower-case header names, sorted, each once, separated by ';'");
      }
    }
    if (!headers.contains("host")) {
      throw new SignatureFailure(Code.IncompleteSignature, "SignedHeaders must include host");
    }
    if (!SIGNATURE_SHAPE.matcher(signature).matches()) {
      throw new SignatureFailure(
          Code.IncompleteSignature, "the Signature must be 64 lower-case hex digits");
    }
    return new Claim(
        scope[0],
        scope[1],
        scope[2],
        scope[3],
        amzDate,
        signedAt,
        headers,
        signature,
        presigned,
        expiresSeconds);
  }

  /** X-Amz-Date's instant: {@code YYYYMMDD'T'HHMMSS'Z'} exactly, a real date and time. */
  private static Instant amzDate(String amzDate) {
    if (AMZ_DATE_SHAPE.matcher(amzDate).matches()) {
      try {
        return LocalDateTime.parse(amzDate, AMZ_DATE).toInstant(ZoneOffset.UTC);
      } catch (DateTimeParseException e) {
        // a 13th month, a 31st of April: refused below
      }
    }
    throw new SignatureFailure(
        Code.IncompleteSignature,
        "X-Amz-Date must be a UTC time as YYYYMMDD'T'HHMMSS'Z', e.g. 20261203T094500Z");
  }

  /**
   * Holds a claim to the one service this server answers as and to the clock: within {@link
   * #MAX_SKEW} of now, or for a pre-signed URL not yet expired (and not signed in the future).
   */
  static void check(Claim claim, String service, Clock clock) {
    if (!service.equals(claim.service())) {
      throw new SignatureFailure(
          Code.SignatureDoesNotMatch,
          "the Credential should be scoped to the correct service: '" + service + "'");
    }
    Instant now = clock.instant();
    if (claim.signedAt().isAfter(now.plus(MAX_SKEW))) {
      throw new SignatureFailure(
          Code.RequestExpired,
          "X-Amz-Date "
              + claim.amzDate()
              + " is more than 15 minutes ahead of the server's time ("
              + now
              + ")");
    }
    if (claim.presigned()) {
      Instant end = claim.signedAt().plusSeconds(claim.expiresSeconds());
      if (now.isAfter(end)) {
        throw new SignatureFailure(Code.RequestExpired, "the pre-signed URL expired at " + end);
      }
    } else if (claim.signedAt().isBefore(now.minus(MAX_SKEW))) {
      throw new SignatureFailure(
          Code.RequestExpired,
          "X-Amz-Date "
              + claim.amzDate()
              + " is more than 15 minutes before the server's time ("
              + now
              + ")");
    }
  }

  /**
   * Recomputes the signature with the access key's secret and compares it in constant time; fails
   * with {@code SignatureDoesNotMatch} if it differs. Hashes the whole body: call from a worker.
   */
  static void verify(SignedRequest request, Claim claim, String secret) {
    byte[] key = signingKey(secret, claim.date(), claim.region(), claim.service());
    byte[] given = claim.signature().getBytes(StandardCharsets.US_ASCII);
    boolean matched = false;
    for (String payloadHash : payloadHashes(request, claim)) {
      String expected =
          signature(key, stringToSign(claim, canonicalRequest(request, claim, payloadHash)));
      // Every candidate is compared, so the time taken does not say which one matched.
      matched |= MessageDigest.isEqual(expected.getBytes(StandardCharsets.US_ASCII), given);
    }
    if (!matched) {
      throw new SignatureFailure(
          Code.SignatureDoesNotMatch,
          "the request signature we calculated does not match the signature you provided:"
              + " check the secret access key and the signing method");
    }
  }

  /**
   * The payload hashes the client may have signed: its x-amz-content-sha256 where it sent one (it
   * must be the body's), else the body's SHA-256 — or, for a pre-signed URL without a body, {@code
   * UNSIGNED-PAYLOAD} too. A body is never left unsigned: its parameters act as the query's do.
   */
  private static List<String> payloadHashes(SignedRequest request, Claim claim) {
    String actual = HEX.formatHex(Ids.sha256(request.body()));
    boolean mayBeUnsigned = claim.presigned() && request.body().length == 0;
    String declared = request.headers().get("X-Amz-Content-Sha256");
    if (declared == null) {
      return mayBeUnsigned ? List.of(actual, UNSIGNED_PAYLOAD) : List.of(actual);
    }
    if (declared.equals(UNSIGNED_PAYLOAD)) {
      if (!mayBeUnsigned) {
        throw new SignatureFailure(
            Code.IncompleteSignature,
            "UNSIGNED-PAYLOAD is accepted only for a pre-signed URL without a body");
      }
      return List.of(UNSIGNED_PAYLOAD);
    }
    if (!declared.equalsIgnoreCase(actual)) {
      throw new SignatureFailure(
          Code.SignatureDoesNotMatch, "the body's SHA-256 is not its x-amz-content-sha256 header");
    }
    return List.of(declared);
  }

  static String canonicalRequest(SignedRequest request, Claim claim, String payloadHash) {
    return request.method()
        + "\n"
        + canonicalUri(request.rawPath())
        + "\n"
        + canonicalQuery(request.rawQuery(), claim.presigned())
        + "\n"
        + canonicalHeaders(request.headers(), claim.signedHeaders())
        + "\n"
        + String.join(";", claim.signedHeaders())
        + "\n"
        + payloadHash;
  }

  static String stringToSign(Claim claim, String canonicalRequest) {
    return ALGORITHM
        + "\n"
        + claim.amzDate()
        + "\n"
        + claim.scope()
        + "\n"
        + HEX.formatHex(Ids.sha256(canonicalRequest));
  }

  /** kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request"). */
  static byte[] signingKey(String secret, String date, String region, String service) {
    byte[] key = ("AWS4" + secret).getBytes(StandardCharsets.UTF_8);
    for (String step : List.of(date, region, service, TERMINATOR)) {
      key = hmac(key, step);
    }
    return key;
  }

  static String signature(byte[] signingKey, String stringToSign) {
    return HEX.formatHex(hmac(signingKey, stringToSign));
  }

  /**
   * The path with dot segments resolved and empty ones dropped (as AWS's own signers normalise it),
   * then encoded once more: the raw path's escapes are encoded again ({@code %2F} → {@code %252F}).
   */
  static String canonicalUri(String rawPath) {
    List<String> segments = new ArrayList<>();
    for (String segment : (rawPath == null ? "" : rawPath).split("/")) {
      if (segment.equals("..")) {
        if (!segments.isEmpty()) {
          segments.remove(segments.size() - 1);
        }
      } else if (!segment.isEmpty() && !segment.equals(".")) {
        segments.add(segment);
      }
    }
    String path = "/" + String.join("/", segments);
    if (!segments.isEmpty() && rawPath.endsWith("/")) {
      path += "/";
    }
    return encode(path.getBytes(StandardCharsets.UTF_8), true);
  }

  /**
   * The query's parameters decoded and encoded again as RFC 3986 says (only unreserved characters
   * bare), sorted by name then value; a pre-signed URL's X-Amz-Signature left out.
   */
  static String canonicalQuery(String rawQuery, boolean presigned) {
    List<Param> params = new ArrayList<>(queryParams(rawQuery));
    if (presigned) {
      params.removeIf(p -> p.name().equals(SIGNATURE_PARAM));
    }
    params.sort(Comparator.comparing(Param::canonicalName).thenComparing(Param::canonicalValue));
    List<String> pairs = new ArrayList<>();
    for (Param p : params) {
      pairs.add(p.canonicalName() + "=" + p.canonicalValue());
    }
    return String.join("&", pairs);
  }

  /** Each signed header, {@code name:values}, values trimmed, inner whitespace collapsed. */
  private static String canonicalHeaders(MultiMap headers, List<String> signedHeaders) {
    StringBuilder out = new StringBuilder();
    for (String name : signedHeaders) {
      List<String> values = new ArrayList<>();
      for (String v : headers.getAll(name)) {
        values.add(WHITESPACE.matcher(v.trim()).replaceAll(" "));
      }
      out.append(name).append(':').append(String.join(",", values)).append('\n');
    }
    return out.toString();
  }

  private static List<Param> queryParams(String rawQuery) {
    List<Param> params = new ArrayList<>();
    if (rawQuery == null) {
      return params;
    }
    for (String piece : rawQuery.split("&")) {
      if (piece.isEmpty()) {
        continue;
      }
      int eq = piece.indexOf('=');
      byte[] name = percentDecode(eq < 0 ? piece : piece.substring(0, eq));
      byte[] value = percentDecode(eq < 0 ? "" : piece.substring(eq + 1));
      params.add(
          new Param(
              new String(name, StandardCharsets.UTF_8),
              new String(value, StandardCharsets.UTF_8),
              encode(name, false),
              encode(value, false)));
    }
    return params;
  }

  /**
   * %XX escapes decoded to bytes; anything else (a stray {@code %}, a {@code +}) stands for itself.
   */
  private static byte[] percentDecode(String s) {
    byte[] raw = s.getBytes(StandardCharsets.UTF_8);
    ByteArrayOutputStream out = new ByteArrayOutputStream(raw.length);
    for (int i = 0; i < raw.length; i++) {
      int hi = i + 2 < raw.length && raw[i] == '%' ? Character.digit(raw[i + 1], 16) : -1;
      int lo = hi < 0 ? -1 : Character.digit(raw[i + 2], 16);
      if (lo >= 0) {
        out.write(hi << 4 | lo);
        i += 2;
      } else {
        out.write(raw[i]);
      }
    }
    return out.toByteArray();
  }

  /** RFC 3986: unreserved characters (and {@code /} where kept) bare, every other byte %XX. */
  private static String encode(byte[] bytes, boolean keepSlash) {
    StringBuilder out = new StringBuilder(bytes.length * 3);
    for (byte b : bytes) {
      char c = (char) (b & 0xff);
      if ((c >= 'A' && c <= 'Z')
          || (c >= 'a' && c <= 'z')
          || (c >= '0' && c <= '9')
          || c == '-'
          || c == '_'
          || c == '.'
          || c == '~'
          || (keepSlash && c == '/')) {
        out.append(c);
      } else {
        out.append('%').append(HEX_UPPER.toHexDigits(b));
      }
    }
    return out.toString();
  }

  private static byte[] hmac(byte[] key, String data) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      return mac.doFinal(data.getBytes(StandardCharsets.UTF_8));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HMAC-SHA256 unavailable", e);
    }
  }
}
