package io.warmmetal.agent.enrollment;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * What an enrolled agent keeps in its state directory: its machine id, its private key (0600), its
 * client certificate and the CA certificate it trusts from then on. Blocking file I/O: call from
 * worker threads.
 */
public record AgentIdentity(String machineId, String keyPem, String certificatePem, String caPem) {
  static final String MACHINE_ID = "machine-id";
  static final String KEY = "agent.key";
  static final String CERT = "agent.crt";
  static final String CA = "ca.crt";

  static final String RENEWED = "renewed.pem";

  /**
   * The identity stored in {@code dir}, if the agent enrolled before (finishing a renewal a crash
   * interrupted).
   */
  public static Optional<AgentIdentity> load(Path dir) throws IOException {
    if (!Files.exists(dir.resolve(MACHINE_ID))) {
      return Optional.empty();
    }
    Path renewed = dir.resolve(RENEWED);
    if (Files.exists(renewed)) {
      String pair = Files.readString(renewed);
      int cert = pair.indexOf("-----BEGIN CERTIFICATE-----");
      install(dir, pair.substring(0, cert), pair.substring(cert));
      Files.delete(renewed);
    }
    return Optional.of(
        new AgentIdentity(
            Files.readString(dir.resolve(MACHINE_ID)).trim(),
            Files.readString(dir.resolve(KEY)),
            Files.readString(dir.resolve(CERT)),
            Files.readString(dir.resolve(CA))));
  }

  /**
   * Stores the identity; the machine id goes last, so a crash midway leaves the agent not enrolled.
   */
  public void save(Path dir) throws IOException {
    Files.createDirectories(dir);
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
    install(dir, keyPem, certificatePem);
    Files.writeString(dir.resolve(CA), caPem);
    // Written aside and renamed into place: the marker is whole or absent, never half there.
    Path staged = dir.resolve(MACHINE_ID + ".tmp");
    Files.writeString(staged, machineId + "\n");
    Files.move(
        staged,
        dir.resolve(MACHINE_ID),
        StandardCopyOption.ATOMIC_MOVE,
        StandardCopyOption.REPLACE_EXISTING);
  }

  /**
   * Stores a renewed key and certificate in place of the current ones, crash-safe: the pair is
   * first written whole to one file and renamed into place; {@link #load} finishes an interrupted
   * replacement from it.
   */
  public void saveRenewed(Path dir) throws IOException {
    Path staged = dir.resolve(RENEWED + ".tmp");
    Files.deleteIfExists(staged);
    Files.createFile(
        staged, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    Files.writeString(staged, keyPem + certificatePem);
    Files.move(
        staged,
        dir.resolve(RENEWED),
        StandardCopyOption.ATOMIC_MOVE,
        StandardCopyOption.REPLACE_EXISTING);
    install(dir, keyPem, certificatePem);
    Files.writeString(dir.resolve(CA), caPem);
    Files.delete(dir.resolve(RENEWED));
  }

  private static void install(Path dir, String key, String cert) throws IOException {
    Path keyFile = dir.resolve(KEY);
    Files.deleteIfExists(keyFile);
    Files.createFile(
        keyFile,
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    Files.writeString(keyFile, key);
    Files.writeString(dir.resolve(CERT), cert);
  }

  /** The client certificate, parsed. */
  public X509Certificate certificate() {
    return parse(certificatePem);
  }

  /** The CA certificate the agent trusts, parsed. */
  public X509Certificate caCertificate() {
    return parse(caPem);
  }

  /**
   * Whether the certificate should be renewed at {@code now}: within {@code before} of its end, or
   * (null) within a third of its lifetime.
   */
  public boolean renewalDue(Instant now, Duration before) {
    X509Certificate cert = certificate();
    Instant end = cert.getNotAfter().toInstant();
    Duration margin =
        before != null
            ? before
            : Duration.between(cert.getNotBefore().toInstant(), end).dividedBy(3);
    return !now.isBefore(end.minus(margin));
  }

  private static X509Certificate parse(String pem) {
    try {
      return (X509Certificate)
          CertificateFactory.getInstance("X.509")
              .generateCertificate(
                  new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)));
    } catch (CertificateException e) {
      throw new IllegalStateException("unreadable certificate in the agent's state", e);
    }
  }

  @Override
  public String toString() {
    return "AgentIdentity[" + machineId + "]"; // never the key
  }
}
