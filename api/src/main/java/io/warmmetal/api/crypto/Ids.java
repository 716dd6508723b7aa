package io.warmmetal.api.crypto;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;

/** Random identifiers and token secrets, and the SHA-256 digests tokens are stored as. */
public final class Ids {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final HexFormat HEX = HexFormat.of();
  private static final String BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

  private Ids() {}

  /**
   * {@code prefix} followed by {@code hexDigits} random lowercase hex digits, e.g. {@code m-3f2a…}.
   */
  public static String random(String prefix, int hexDigits) {
    byte[] b = new byte[(hexDigits + 1) / 2];
    RANDOM.nextBytes(b);
    return prefix + HEX.formatHex(b).substring(0, hexDigits);
  }

  public static String machineId() {
    return random("m-", 16);
  }

  /** EC2-style: {@code i-} and 17 hex digits. */
  public static String instanceId() {
    return random("i-", 17);
  }

  public static String commandId() {
    return random("cmd-", 16);
  }

  public static String launchId() {
    return random("r-", 17);
  }

  public static String tokenId() {
    return random("tok-", 16);
  }

  /** A bearer secret: {@code wm_} and 256 random bits, base64url. */
  public static String tokenSecret() {
    byte[] b = new byte[32];
    RANDOM.nextBytes(b);
    return "wm_" + Base64.getUrlEncoder().withoutPadding().encodeToString(b);
  }

  /**
   * An access key id, shaped as AWS's: {@code AKWM} and 16 random characters of the base32 alphabet
   * ([A-Z2-7], 80 bits), so that tools checking the shape accept it.
   */
  public static String accessKeyId() {
    StringBuilder id = new StringBuilder("AKWM");
    for (int i = 0; i < 16; i++) {
      id.append(BASE32.charAt(RANDOM.nextInt(BASE32.length())));
    }
    return id.toString();
  }

  /** An access key's secret, shaped as AWS's: 30 random bytes, 40 characters of base64. */
  public static String accessKeySecret() {
    byte[] b = new byte[30];
    RANDOM.nextBytes(b);
    return Base64.getEncoder().encodeToString(b);
  }

  public static byte[] sha256(byte[] data) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(data);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  public static byte[] sha256(String s) {
    return sha256(s.getBytes(StandardCharsets.UTF_8));
  }
}
