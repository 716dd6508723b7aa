package io.warmmetal.cli.http;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

/**
 * TLS trust: the JDK's trust store, plus a private CA from a PEM file. There is deliberately no way
 * to turn verification off: a token goes with every request.
 */
public final class Trust {
  private Trust() {}

  public static SSLContext context(Path caFile) {
    try {
      SSLContext ctx = SSLContext.getInstance("TLS");
      X509TrustManager jdk = manager(null);
      X509TrustManager trust = caFile == null ? jdk : either(manager(privateCa(caFile)), jdk);
      ctx.init(null, new TrustManager[] {trust}, null);
      return ctx;
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalArgumentException(
          "cannot use --ca-file " + caFile + ": " + e.getMessage(), e);
    }
  }

  private static KeyStore privateCa(Path pem) throws GeneralSecurityException, IOException {
    KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
    store.load(null, null);
    try (InputStream in = Files.newInputStream(pem)) {
      int i = 0;
      for (var cert : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        store.setCertificateEntry("ca-" + i++, cert);
      }
      if (i == 0) {
        throw new CertificateException("no certificate in " + pem);
      }
    }
    return store;
  }

  private static X509TrustManager manager(KeyStore store) throws GeneralSecurityException {
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(store); // null: the JDK's own trust store
    for (TrustManager tm : tmf.getTrustManagers()) {
      if (tm instanceof X509TrustManager x) {
        return x;
      }
    }
    throw new GeneralSecurityException("no X509TrustManager");
  }

  /** Trusts a server either the private CA or the JDK's store vouches for. */
  private static X509TrustManager either(X509TrustManager first, X509TrustManager second) {
    return new X509TrustManager() {
      @Override
      public void checkClientTrusted(X509Certificate[] chain, String authType)
          throws CertificateException {
        throw new CertificateException("client certificates are not checked here");
      }

      @Override
      public void checkServerTrusted(X509Certificate[] chain, String authType)
          throws CertificateException {
        try {
          first.checkServerTrusted(chain, authType);
        } catch (CertificateException e) {
          second.checkServerTrusted(chain, authType);
        }
      }

      @Override
      public X509Certificate[] getAcceptedIssuers() {
        X509Certificate[] a = first.getAcceptedIssuers();
        X509Certificate[] b = second.getAcceptedIssuers();
        X509Certificate[] all = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
      }
    };
  }
}
