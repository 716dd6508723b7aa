package io.warmmetal.api.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.warmmetal.api.testing.ApiFixture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The one-command start: no database URL, an embedded PostgreSQL in the data directory that keeps
 * its data.
 */
@ExtendWith(VertxExtension.class)
class EmbeddedDatabaseTest {

  @Test
  void startsWithNothingConfiguredAndKeepsItsDataAcrossRestarts(Vertx vertx) throws Exception {
    Path dataDir = Files.createTempDirectory("warmmetal-embedded");
    Files.setPosixFilePermissions(dataDir, PosixFilePermissions.fromString("rwx--x--x"));
    Map<String, String> embedded = new HashMap<>();
    embedded.put("WARMMETAL_DATABASE_URL", "");
    embedded.put("WARMMETAL_DATA_DIR", dataDir.toString());

    String machine;
    try (ApiFixture fx = ApiFixture.start(vertx, embedded)) {
      machine = fx.registerMachines(1, ApiFixture.facts(8, 32), true).get(0);
      // A second server on the same data directory is refused, naming the problem.
      assertThatThrownBy(() -> ApiFixture.start(vertx, embedded))
          .hasMessageContaining("WARMMETAL_DATA_DIR");
    }
    try (ApiFixture again = ApiFixture.start(vertx, embedded)) {
      assertThat(again.client.get("/v1/machines/" + machine, ApiFixture.ADMIN).status())
          .isEqualTo(200);
    }
    // The cluster is private to the user that runs it; the password beside it is owner-only.
    assertThat(Files.getPosixFilePermissions(dataDir.resolve("postgres")))
        .isEqualTo(PosixFilePermissions.fromString("rwx------"));
    assertThat(Files.getPosixFilePermissions(dataDir.resolve("postgres-password")))
        .isEqualTo(PosixFilePermissions.fromString("rw-------"));
  }
}
