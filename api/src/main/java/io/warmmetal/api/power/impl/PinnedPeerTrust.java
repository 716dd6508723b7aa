package io.warmmetal.api.power.impl;

import io.warmmetal.protocol.CaPin;
import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * Trusts a BMC's TLS certificate by a pin of its public key, or of the key of the CA that signed it
 * (then the certificate must also be valid now). BMCs mostly present self-signed certificates no
 * public CA vouches for and whose names match nothing; the pin is what identifies them. Nothing
 * else is trusted.
 */
final class PinnedPeerTrust extends X509ExtendedTrustManager {
  private final CaPin pin;

  PinnedPeerTrust(CaPin pin) {
    this.pin = pin;
  }

  void verify(X509Certificate[] chain) throws CertificateException {
    if (chain == null || chain.length == 0) {
      throw new CertificateException("the BMC presented no certificate");
    }
    X509Certificate leaf = chain[0];
    if (pin.matches(leaf)) {
      return; // its very key is pinned
    }
    for (X509Certificate ca : chain) {
      if (pin.matches(ca)) {
        try {
          leaf.verify(ca.getPublicKey());
        } catch (GeneralSecurityException e) {
          throw new CertificateException("the BMC's certificate is not signed by the pinned CA", e);
        }
        leaf.checkValidity();
        return;
      }
    }
    throw new CertificateException("the BMC's certificate does not match the pin " + pin);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType)
      throws CertificateException {
    verify(chain);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
      throws CertificateException {
    verify(chain);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
      throws CertificateException {
    verify(chain);
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType)
      throws CertificateException {
    throw new CertificateException("not a server");
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
      throws CertificateException {
    throw new CertificateException("not a server");
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
      throws CertificateException {
    throw new CertificateException("not a server");
  }

  @Override
  public X509Certificate[] getAcceptedIssuers() {
    return new X509Certificate[0];
  }
}
