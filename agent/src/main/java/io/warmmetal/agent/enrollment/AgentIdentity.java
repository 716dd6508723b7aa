package io.warmmetal.agent.enrollment;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;

/**
 * What an enrolled agent keeps in its state directory: its machine id, its private key (0600), its client
 * certificate and the CA certificate it trusts from then on. Blocking file I/O: call from worker threads.
 */
public record AgentIdentity(String machineId, String keyPem, String certificatePem, String caPem) {
  static final String MACHINE_ID = "machine-id";
  static final String KEY = "agent.key";
  static final String CERT = "agent.crt";
  static final String CA = "ca.crt";

  /** The identity stored in {@code dir}, if the agent enrolled before. */
  public static Optional<AgentIdentity> load(Path dir) throws IOException {
    if (!Files.exists(dir.resolve(MACHINE_ID))) {
      return Optional.empty();
    }
    return Optional.of(new AgentIdentity(Files.readString(dir.resolve(MACHINE_ID)).trim(),
        Files.readString(dir.resolve(KEY)), Files.readString(dir.resolve(CERT)), Files.readString(dir.resolve(CA))));
  }

  /** Stores the identity; the machine id goes last, so a crash midway leaves the agent not enrolled. */
  public void save(Path dir) throws IOException {
    Files.createDirectories(dir);
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
    Path key = dir.resolve(KEY);
    Files.deleteIfExists(key);
    Files.createFile(key, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    Files.writeString(key, keyPem);
    Files.writeString(dir.resolve(CERT), certificatePem);
    Files.writeString(dir.resolve(CA), caPem);
    // Written aside and renamed into place: the marker is whole or absent, never half there.
    Path staged = dir.resolve(MACHINE_ID + ".tmp");
    Files.writeString(staged, machineId + "\n");
    Files.move(staged, dir.resolve(MACHINE_ID), java.nio.file.StandardCopyOption.ATOMIC_MOVE,
        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
  }

  @Override
  public String toString() {
    return "AgentIdentity[" + machineId + "]"; // never the key
  }
}
