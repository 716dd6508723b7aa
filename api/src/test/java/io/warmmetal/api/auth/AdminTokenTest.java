package io.warmmetal.api.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiFixture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.Map;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The bootstrap admin token: generated into a 0600 file when not configured, and kept across
 * restarts.
 */
@ExtendWith(VertxExtension.class)
class AdminTokenTest {

  @Test
  void generatedTokenIsWrittenOwnerOnlyAndWorks(Vertx vertx) throws Exception {
    Map<String, String> noToken = new HashMap<>();
    noToken.put("WARMMETAL_ADMIN_TOKEN", "");
    try (ApiFixture fx = ApiFixture.start(vertx, noToken)) {
      Path file = fx.dataDir.resolve("admin-token");
      assertThat(Files.getPosixFilePermissions(file))
          .isEqualTo(PosixFilePermissions.fromString("rw-------"));
      String token = Files.readString(file).trim();
      assertThat(token).startsWith("wm_").hasSizeGreaterThan(40);
      assertThat(fx.client.get("/v1/tokens", token).status()).isEqualTo(200);
      assertThat(fx.client.get("/v1/tokens", ApiFixture.ADMIN).status()).isEqualTo(401);
      // The secret key sealing launch secrets sits beside it, also owner-only.
      assertThat(Files.getPosixFilePermissions(fx.dataDir.resolve("secret.key")))
          .isEqualTo(PosixFilePermissions.fromString("rw-------"));
    }
  }

  @Test
  void aShortConfiguredTokenIsRefusedAtStart(Vertx vertx) {
    Map<String, String> weak = new HashMap<>();
    weak.put("WARMMETAL_ADMIN_TOKEN", "short");
    Assertions.assertThatThrownBy(() -> ApiFixture.start(vertx, weak))
        .hasMessageContaining("at least 16");
  }
}
