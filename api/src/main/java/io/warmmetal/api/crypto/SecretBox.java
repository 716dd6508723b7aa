package io.warmmetal.api.crypto;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.Optional;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Seals secrets at rest (bootstrap tokens, user data) with AES-256-GCM. A sealed value is {@code
 * nonce (12 bytes) || ciphertext || tag}; the associated data binds it to the row it belongs to, so
 * a sealed value copied to another row does not open. Blocking-safe but CPU work: call from worker
 * threads.
 */
public final class SecretBox {
  private static final int NONCE_BYTES = 12;
  private static final int TAG_BITS = 128;
  private static final SecureRandom RANDOM = new SecureRandom();

  private final SecretKeySpec key;
  private final SecretKeySpec macKey;

  private SecretBox(byte[] key) {
    if (key.length != 32) {
      throw new IllegalArgumentException(
          "the secret key must be 32 bytes (base64 of 32 random bytes)");
    }
    this.key = new SecretKeySpec(key, "AES");
    // A separate key for fingerprints, derived so that one setting serves both purposes.
    byte[] derived = new byte[key.length + 1];
    System.arraycopy(key, 0, derived, 0, key.length);
    derived[key.length] = 'm';
    this.macKey = new SecretKeySpec(Ids.sha256(derived), "HmacSHA256");
  }

  /**
   * A keyed fingerprint (HMAC-SHA256) of data that may hold secrets: equal inputs give equal
   * fingerprints, yet one stored in the database does not let anyone test guesses of the secrets
   * without the key.
   */
  public byte[] fingerprint(byte[] data) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(macKey);
      return mac.doFinal(data);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HMAC-SHA256 unavailable", e);
    }
  }

  /**
   * The configured key (base64), or the key file in the data directory, created with 0600
   * permissions on first use.
   */
  public static SecretBox load(Optional<String> configuredBase64, Path dataDir) throws IOException {
    if (configuredBase64.isPresent()) {
      try {
        return new SecretBox(Base64.getDecoder().decode(configuredBase64.get()));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("WARMMETAL_SECRET_KEY: " + e.getMessage());
      }
    }
    Path file = dataDir.resolve("secret.key");
    if (!Files.exists(file)) {
      byte[] fresh = new byte[32];
      RANDOM.nextBytes(fresh);
      Files.createFile(
          file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
      Files.writeString(file, Base64.getEncoder().encodeToString(fresh));
    }
    return new SecretBox(Base64.getDecoder().decode(Files.readString(file).trim()));
  }

  public byte[] seal(byte[] plaintext, String boundTo) {
    try {
      byte[] nonce = new byte[NONCE_BYTES];
      RANDOM.nextBytes(nonce);
      Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
      c.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, nonce));
      c.updateAAD(boundTo.getBytes(StandardCharsets.UTF_8));
      byte[] sealed = c.doFinal(plaintext);
      byte[] out = Arrays.copyOf(nonce, NONCE_BYTES + sealed.length);
      System.arraycopy(sealed, 0, out, NONCE_BYTES, sealed.length);
      return out;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM unavailable", e);
    }
  }

  public byte[] open(byte[] sealed, String boundTo) throws GeneralSecurityException {
    Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
    c.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, sealed, 0, NONCE_BYTES));
    c.updateAAD(boundTo.getBytes(StandardCharsets.UTF_8));
    return c.doFinal(sealed, NONCE_BYTES, sealed.length - NONCE_BYTES);
  }
}
