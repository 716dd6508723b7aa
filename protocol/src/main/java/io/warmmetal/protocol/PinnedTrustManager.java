package io.warmmetal.protocol;

import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * Trusts a TLS peer only if its certificate is currently valid, signed by the one CA whose public
 * key matches the pin (that CA certificate being in the chain the peer presents, as kubeadm's token
 * discovery does), and issued for the role the peer plays: a server must hold a serverAuth
 * certificate, so an agent's client certificate, signed by the same CA, cannot impersonate the API.
 * Nothing else is trusted: not the JDK's CA list, not any other chain.
 */
public final class PinnedTrustManager extends X509ExtendedTrustManager {
  static final String SERVER_AUTH = "1.3.6.1.5.5.7.3.1";
  static final String CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";

  private final CaPin pin;

  public PinnedTrustManager(CaPin pin) {
    this.pin = pin;
  }

  /** Verifies a chain presented by a peer in the given role; throws naming why it is refused. */
  public void verify(X509Certificate[] chain, String purpose) throws CertificateException {
    if (chain == null || chain.length == 0) {
      throw new CertificateException("the peer presented no certificate");
    }
    X509Certificate leaf = chain[0];
    leaf.checkValidity();
    List<String> purposes = leaf.getExtendedKeyUsage();
    if (purposes == null || !purposes.contains(purpose)) {
      throw new CertificateException(
          "the peer's certificate is not issued for "
              + (SERVER_AUTH.equals(purpose) ? "a server" : "a client"));
    }
    for (X509Certificate candidate : chain) {
      if (pin.matches(candidate)) {
        try {
          leaf.verify(candidate.getPublicKey());
          candidate.checkValidity();
          return;
        } catch (GeneralSecurityException e) {
          throw new CertificateException(
              "the peer's certificate is not signed by the pinned CA", e);
        }
      }
    }
    throw new CertificateException(
        "no certificate in the peer's chain matches the pinned CA " + pin);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType)
      throws CertificateException {
    verify(chain, SERVER_AUTH);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
      throws CertificateException {
    verify(chain, SERVER_AUTH);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
      throws CertificateException {
    verify(chain, SERVER_AUTH);
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType)
      throws CertificateException {
    verify(chain, CLIENT_AUTH);
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
      throws CertificateException {
    verify(chain, CLIENT_AUTH);
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
      throws CertificateException {
    verify(chain, CLIENT_AUTH);
  }

  @Override
  public X509Certificate[] getAcceptedIssuers() {
    return new X509Certificate[0];
  }
}
