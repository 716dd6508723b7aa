package io.warmmetal.api.db;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.TestDatabase;
import java.sql.Connection;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A database from when client tokens were unique per caller (V20) may hold one client token under
 * two callers of a project. The migration to per-project client tokens keeps them: the oldest
 * launch holds the token for the project, the later one still answers its own caller's retry. The
 * single-launch function older API replicas call during a rolling upgrade goes on working, with the
 * new scope.
 */
@ExtendWith(VertxExtension.class)
class ClientTokensMigrationTest {
  private static final String SINGLE_LAUNCH =
      "SELECT launch_instances($1, $2, $3, $4, ARRAY['x86-8c-32g'], false,"
          + " 1, 1, '{}', NULL, NULL, false, false, '{}') AS outcome";

  @Test
  void aClientTokenTwoCallersOfAProjectUsedKeepsBothLaunches(Vertx vertx) throws Exception {
    String url = TestDatabase.freshDatabaseAt("20");
    try (Connection c = TestDatabase.connect(url)) {
      c.createStatement()
          .execute(
              """
          INSERT INTO launches (id, caller, client_token, request_hash, project, created_at) VALUES
            ('r-first', 'tok-00000000000000aa', 'shared', '\\x01', 'default', now() - interval '2 hours'),
            ('r-later', 'tok-00000000000000bb', 'shared', '\\x02', 'default', now() - interval '1 hour'),
            ('r-alone', 'tok-00000000000000aa', 'alone', '\\x03', 'default', now() - interval '1 hour')""");
    }

    try (ApiFixture fx = ApiFixture.start(vertx, Map.of("WARMMETAL_DATABASE_URL", url))) {
      assertThat(fx.count("SELECT count(*) FROM launches WHERE token_per_caller")).isEqualTo(1);
      assertThat(
              fx.count("SELECT count(*) FROM launches WHERE id = 'r-later' AND token_per_caller"))
          .isEqualTo(1);
      assertThat(
              fx.count(
                  "SELECT count(*) FROM pg_constraint"
                      + " WHERE conname = 'launches_project_caller_client_token_key'"))
          .isZero();
      fx.registerMachines(2, ApiFixture.facts(8, 32), true);

      // The later launch's own caller replays its own launch; every other caller gets the
      // project's, the oldest.
      expect(fx, "tok-00000000000000bb", "shared", 2, "replayed", "r-later");
      expect(fx, "tok-00000000000000cc", "shared", 1, "replayed", "r-first");
      expect(fx, "tok-00000000000000cc", "shared", 2, "mismatch", "r-first");
      expect(fx, "tok-00000000000000cc", "alone", 3, "replayed", "r-alone");
      // A new launch through the older replicas' function, retried by a rotated credential, is one
      // launch.
      expect(fx, "tok-00000000000000dd", "via-old-replica", 4, "launched", null);
      expect(
          fx,
          "tok-00000000000000ee",
          "via-old-replica",
          4,
          "replayed",
          fx.db()
              .query("SELECT id FROM launches WHERE client_token = 'via-old-replica'")
              .execute()
              .await()
              .iterator()
              .next()
              .getString("id"));
      assertThat(fx.count("SELECT count(*) FROM instances")).isEqualTo(1);
      assertThat(fx.count("SELECT count(*) FROM launches")).isEqualTo(4);
    }
  }

  /**
   * One launch as an API replica from before batching calls it (a launch of the shape, its
   * request's fingerprint the one byte {@code requestHash}), and the outcome and launch it must get
   * (null: a new one).
   */
  private static void expect(
      ApiFixture fx,
      String caller,
      String clientToken,
      int requestHash,
      String outcome,
      String launchId) {
    String newId = "r-" + UUID.randomUUID();
    JsonObject got =
        (JsonObject)
            fx.db()
                .preparedQuery(SINGLE_LAUNCH)
                .execute(
                    Tuple.of(
                        newId, caller, clientToken, Buffer.buffer(new byte[] {(byte) requestHash})))
                .await()
                .iterator()
                .next()
                .getValue("outcome");
    assertThat(got.getString("outcome")).as(caller + " " + clientToken).isEqualTo(outcome);
    assertThat(got.getString("launchId"))
        .as(caller + " " + clientToken)
        .isEqualTo(launchId == null ? newId : launchId);
  }
}
