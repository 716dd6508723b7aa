package io.warmmetal.api.crypto;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class RedactionTest {
  @Test
  void knownSecretsBootstrapTokensAndSecretAssignmentsAreRedacted() {
    String text =
        "kubeadm join --token abcdef.0123456789abcdef; DB_PASSWORD=hunter2 token: wme_x and s3cr3t";
    String redacted = Redaction.redact(text, List.of("s3cr3t"));
    assertThat(redacted)
        .doesNotContain("abcdef.0123456789abcdef", "hunter2", "wme_x", "s3cr3t")
        .contains("kubeadm join --token [redacted]", "DB_PASSWORD=[redacted]");
    assertThat(Redaction.redact("prepare took 120 ms")).isEqualTo("prepare took 120 ms");
  }
}
