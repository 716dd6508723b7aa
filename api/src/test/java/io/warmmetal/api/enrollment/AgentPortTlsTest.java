package io.warmmetal.api.enrollment;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warmmetal.api.crypto.CertificateAuthority;
import io.warmmetal.protocol.CaPin;
import io.warmmetal.protocol.PinnedTrustManager;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.assertj.core.api.Assertions;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.pkcs.jcajce.JcaPKCS10CertificationRequestBuilder;
import org.junit.jupiter.api.Test;

/**
 * What the pinned trust accepts: only the right CA, and only certificates issued for the peer's
 * role.
 */
class AgentPortTlsTest {

  @Test
  void anAgentCertificateCannotPassForTheServerNorAnotherCasForEither() throws Exception {
    CertificateAuthority ca =
        CertificateAuthority.loadOrCreate(
            Files.createTempDirectory("ca"), Optional.empty(), Optional.empty());
    PinnedTrustManager trust = new PinnedTrustManager(ca.pin());
    X509Certificate server =
        ca.issueServer(List.of("localhost", "127.0.0.1"), Duration.ofDays(1)).certificate();
    KeyPairGenerator gen = KeyPairGenerator.getInstance("EC");
    gen.initialize(new ECGenParameterSpec("secp256r1"));
    KeyPair agentKeys = gen.generateKeyPair();
    X509Certificate agent =
        ca.signAgent(
            new JcaPKCS10CertificationRequestBuilder(new X500Name("CN=x"), agentKeys.getPublic())
                .build(
                    new JcaContentSignerBuilder("SHA256withECDSA").build(agentKeys.getPrivate())),
            "m-0123456789abcdef",
            Duration.ofDays(1));

    assertThatCode(
            () -> trust.checkServerTrusted(new X509Certificate[] {server, ca.certificate()}, "EC"))
        .doesNotThrowAnyException();
    assertThatCode(
            () -> trust.checkClientTrusted(new X509Certificate[] {agent, ca.certificate()}, "EC"))
        .doesNotThrowAnyException();
    assertThatThrownBy(
            () -> trust.checkServerTrusted(new X509Certificate[] {agent, ca.certificate()}, "EC"))
        .hasMessageContaining("not issued for a server");
    assertThatThrownBy(
            () -> trust.checkClientTrusted(new X509Certificate[] {server, ca.certificate()}, "EC"))
        .hasMessageContaining("not issued for a client");

    CertificateAuthority other =
        CertificateAuthority.loadOrCreate(
            Files.createTempDirectory("ca2"), Optional.empty(), Optional.empty());
    X509Certificate foreign =
        other.issueServer(List.of("localhost"), Duration.ofDays(1)).certificate();
    assertThatThrownBy(
            () ->
                trust.checkServerTrusted(
                    new X509Certificate[] {foreign, other.certificate()}, "EC"))
        .hasMessageContaining("pinned CA");
    // A chain that carries the pinned CA but a leaf it did not sign.
    assertThatThrownBy(
            () -> trust.checkServerTrusted(new X509Certificate[] {foreign, ca.certificate()}, "EC"))
        .hasMessageContaining("not signed by the pinned CA");
    assertThatThrownBy(() -> new CaPin("sha256:abc")).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void theCaKeyIsKeptOwnerOnlyAndReloaded() throws Exception {
    Path dir = Files.createTempDirectory("ca");
    CertificateAuthority first =
        CertificateAuthority.loadOrCreate(dir, Optional.empty(), Optional.empty());
    CertificateAuthority again =
        CertificateAuthority.loadOrCreate(dir, Optional.empty(), Optional.empty());
    Assertions.assertThat(again.pin()).isEqualTo(first.pin());
    Assertions.assertThat(Files.getPosixFilePermissions(dir.resolve("ca/ca.key")))
        .isEqualTo(PosixFilePermissions.fromString("rw-------"));
  }
}
