package io.warmmetal.api.crypto;

import io.warmmetal.protocol.CaPin;
import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Optional;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.operator.jcajce.JcaContentVerifierProviderBuilder;
import org.bouncycastle.pkcs.PKCS10CertificationRequest;
import org.bouncycastle.pkcs.PKCSException;
import org.bouncycastle.pkcs.jcajce.JcaPKCS10CertificationRequest;

/**
 * The API's certificate authority (ECDSA P-256, Bouncy Castle for the X.509 structures, the JDK for
 * the cryptography). It signs agents' client certificates, bound to their machine id, and the agent
 * port's server certificate. Its key lives in the data directory (0600) unless given by
 * configuration. Blocking: call from worker threads.
 */
public final class CertificateAuthority {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final String SIGNATURE = "SHA256withECDSA";

  private final PrivateKey key;
  private final X509Certificate certificate;

  private CertificateAuthority(PrivateKey key, X509Certificate certificate) {
    this.key = key;
    this.certificate = certificate;
  }

  /** A key and the certificate the CA issued for it. */
  public record Issued(PrivateKey key, X509Certificate certificate) {}

  /**
   * The CA in the given files if configured, else {@code <dataDir>/ca/ca.key} and {@code ca.crt},
   * created on first use.
   */
  public static CertificateAuthority loadOrCreate(
      Path dataDir, Optional<Path> certFile, Optional<Path> keyFile)
      throws IOException, GeneralSecurityException {
    if (certFile.isPresent() != keyFile.isPresent()) {
      throw new IllegalArgumentException(
          "give both WARMMETAL_CA_CERT_FILE and WARMMETAL_CA_KEY_FILE, or neither");
    }
    if (certFile.isPresent()) {
      return new CertificateAuthority(
          readKey(Files.readString(keyFile.get())),
          readCertificate(Files.readString(certFile.get())));
    }
    Path dir = dataDir.resolve("ca");
    return ensure(dir.resolve("ca.crt"), dir.resolve("ca.key"));
  }

  /** The CA in these two files, first made there (the key 0600) unless the key file exists. */
  public static CertificateAuthority ensure(Path cert, Path key)
      throws IOException, GeneralSecurityException {
    if (!Files.exists(key)) {
      Files.createDirectories(key.toAbsolutePath().getParent());
      KeyPair pair = newKeyPair();
      X509Certificate ca = selfSigned(pair);
      Files.writeString(cert, pem(ca));
      Files.createFile(
          key, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
      Files.writeString(key, pem(pair.getPrivate()));
    }
    return new CertificateAuthority(
        readKey(Files.readString(key)), readCertificate(Files.readString(cert)));
  }

  public X509Certificate certificate() {
    return certificate;
  }

  public CaPin pin() {
    return CaPin.of(certificate);
  }

  /**
   * Signs an agent's certificate request: the subject is the machine id (whatever the request asked
   * for), usable only for client authentication. A request whose signature does not verify is
   * refused.
   */
  public X509Certificate signAgent(
      PKCS10CertificationRequest csr, String machineId, Duration validity)
      throws GeneralSecurityException {
    PublicKey agentKey = new JcaPKCS10CertificationRequest(csr).getPublicKey();
    try {
      if (!csr.isSignatureValid(new JcaContentVerifierProviderBuilder().build(agentKey))) {
        throw new GeneralSecurityException("the certificate request's signature does not verify");
      }
    } catch (OperatorCreationException | PKCSException e) {
      throw new GeneralSecurityException(
          "the certificate request cannot be verified: " + e.getMessage(), e);
    }
    return issue(
        new X500Name("CN=" + machineId + ",O=warmmetal-agents"),
        agentKey,
        validity,
        KeyPurposeId.id_kp_clientAuth,
        List.of(
            new GeneralName(GeneralName.uniformResourceIdentifier, "warmmetal://" + machineId)));
  }

  /** The machine id an agent certificate this CA signed is bound to (its subject's CN). */
  public static String machineIdOf(X509Certificate cert) {
    try {
      for (Rdn rdn : new LdapName(cert.getSubjectX500Principal().getName()).getRdns()) {
        if ("CN".equalsIgnoreCase(rdn.getType())) {
          return rdn.getValue().toString();
        }
      }
    } catch (InvalidNameException e) {
      throw new IllegalArgumentException("unreadable certificate subject", e);
    }
    throw new IllegalArgumentException("no CN in the certificate's subject");
  }

  /**
   * A fresh key and server certificate for the agent port, valid for the given host names and IP
   * addresses.
   */
  public Issued issueServer(List<String> names, Duration validity) throws GeneralSecurityException {
    KeyPair pair = newKeyPair();
    List<GeneralName> sans = new ArrayList<>();
    for (String name : names) {
      sans.add(
          name.matches("[0-9.]+|.*:.*")
              ? new GeneralName(GeneralName.iPAddress, name)
              : new GeneralName(GeneralName.dNSName, name));
    }
    return new Issued(
        pair.getPrivate(),
        issue(
            new X500Name("CN=warmmetal-api"),
            pair.getPublic(),
            validity,
            KeyPurposeId.id_kp_serverAuth,
            sans));
  }

  private X509Certificate issue(
      X500Name subject,
      PublicKey subjectKey,
      Duration validity,
      KeyPurposeId purpose,
      List<GeneralName> sans)
      throws GeneralSecurityException {
    Instant now = Instant.now();
    try {
      X509v3CertificateBuilder builder =
          new JcaX509v3CertificateBuilder(
                  certificate,
                  new BigInteger(128, RANDOM),
                  Date.from(now.minusSeconds(300)),
                  Date.from(now.plus(validity)),
                  subject,
                  subjectKey)
              .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
              .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
              .addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(purpose));
      if (!sans.isEmpty()) {
        builder.addExtension(
            Extension.subjectAlternativeName,
            false,
            new GeneralNames(sans.toArray(GeneralName[]::new)));
      }
      return new JcaX509CertificateConverter()
          .getCertificate(builder.build(new JcaContentSignerBuilder(SIGNATURE).build(key)));
    } catch (OperatorCreationException | IOException e) {
      throw new GeneralSecurityException("cannot issue a certificate: " + e.getMessage(), e);
    }
  }

  private static X509Certificate selfSigned(KeyPair pair) throws GeneralSecurityException {
    Instant now = Instant.now();
    X500Name name = new X500Name("CN=WarmMetal CA " + Long.toHexString(RANDOM.nextLong()));
    try {
      X509v3CertificateBuilder builder =
          new JcaX509v3CertificateBuilder(
                  name,
                  new BigInteger(128, RANDOM),
                  Date.from(now.minusSeconds(300)),
                  Date.from(now.plus(Duration.ofDays(3650))),
                  name,
                  pair.getPublic())
              .addExtension(Extension.basicConstraints, true, new BasicConstraints(0))
              .addExtension(
                  Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
      return new JcaX509CertificateConverter()
          .getCertificate(
              builder.build(new JcaContentSignerBuilder(SIGNATURE).build(pair.getPrivate())));
    } catch (OperatorCreationException | IOException e) {
      throw new GeneralSecurityException("cannot create the CA: " + e.getMessage(), e);
    }
  }

  static KeyPair newKeyPair() throws GeneralSecurityException {
    KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
    generator.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
    return generator.generateKeyPair();
  }

  /** PEM of a certificate, or of a private key (PKCS#8, which every reader here understands). */
  public static String pem(Object object) {
    StringWriter out = new StringWriter();
    try (JcaPEMWriter writer = new JcaPEMWriter(out)) {
      if (object instanceof PrivateKey key) {
        writer.writeObject(new JcaPKCS8Generator(key, null));
      } else {
        writer.writeObject(object);
      }
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    return out.toString();
  }

  /** Parses a PEM certificate request; a 400-worthy IllegalArgumentException if it is not one. */
  public static PKCS10CertificationRequest readCsr(String pem) {
    try (PEMParser parser = new PEMParser(new StringReader(pem))) {
      Object object = parser.readObject();
      if (object instanceof PKCS10CertificationRequest csr) {
        return csr;
      }
    } catch (IOException | RuntimeException e) {
      throw new IllegalArgumentException("csr is not a PEM certificate request: " + e.getMessage());
    }
    throw new IllegalArgumentException("csr is not a PEM certificate request");
  }

  private static PrivateKey readKey(String pem) throws IOException {
    try (PEMParser parser = new PEMParser(new StringReader(pem))) {
      Object object = parser.readObject();
      JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
      if (object instanceof PrivateKeyInfo info) {
        return converter.getPrivateKey(info);
      }
      if (object instanceof PEMKeyPair pair) {
        return converter.getKeyPair(pair).getPrivate();
      }
      throw new IOException("the CA key file holds no private key");
    }
  }

  private static X509Certificate readCertificate(String pem)
      throws IOException, GeneralSecurityException {
    try (PEMParser parser = new PEMParser(new StringReader(pem))) {
      Object object = parser.readObject();
      if (object instanceof X509CertificateHolder holder) {
        return new JcaX509CertificateConverter().getCertificate(holder);
      }
      throw new IOException("the CA certificate file holds no certificate");
    }
  }
}
