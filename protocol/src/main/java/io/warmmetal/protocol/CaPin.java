package io.warmmetal.protocol;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PublicKey;
import java.security.cert.X509Certificate;
import java.util.HexFormat;
import java.util.Locale;

/**
 * A pin of the API's certificate authority, as kubeadm's discovery hash: {@code sha256:} and the
 * hex SHA-256 of the CA's DER SubjectPublicKeyInfo. An agent that knows only the pin can verify the
 * API before it sends its enrollment token.
 */
public record CaPin(String value) {

  public CaPin {
    value = value.toLowerCase(Locale.ROOT);
    if (!value.matches("sha256:[0-9a-f]{64}")) {
      throw new IllegalArgumentException("a CA pin is sha256: followed by 64 hex digits");
    }
  }

  public static CaPin of(PublicKey caKey) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(caKey.getEncoded());
      return new CaPin("sha256:" + HexFormat.of().formatHex(digest));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  public static CaPin of(X509Certificate ca) {
    return of(ca.getPublicKey());
  }

  public boolean matches(X509Certificate cert) {
    return equals(of(cert));
  }

  @Override
  public String toString() {
    return value;
  }
}
