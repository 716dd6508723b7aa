package io.warmmetal.api;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.warmmetal.api.auth.TokenStore;
import io.warmmetal.api.config.ApiConfig;
import io.warmmetal.api.crypto.Ids;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bootstrap admin token: {@code WARMMETAL_ADMIN_TOKEN} if set, otherwise one generated at first
 * start and kept in {@code <data dir>/admin-token} (0600). Either way only its hash reaches the
 * database, and it is never logged.
 */
final class AdminToken {
  private static final Logger LOG = LoggerFactory.getLogger(AdminToken.class);
  static final String FILE = "admin-token";
  private static final int MIN_LENGTH = 16;

  private AdminToken() {}

  static Future<Void> install(Vertx vertx, ApiConfig config, TokenStore tokens) {
    if (config.adminToken().isPresent()) {
      String token = config.adminToken().get().value();
      if (token.length() < MIN_LENGTH) {
        return Future.failedFuture(
            new IllegalArgumentException(
                "WARMMETAL_ADMIN_TOKEN must be at least " + MIN_LENGTH + " characters"));
      }
      return tokens.installBootstrapAdmin(token);
    }
    Path file = config.dataDir().resolve(FILE);
    return vertx
        .executeBlocking(() -> DataDir.readOrCreateSecret(file, Ids.tokenSecret()), false)
        .compose(tokens::installBootstrapAdmin)
        .onSuccess(x -> LOG.info("Admin token: see {} (or set WARMMETAL_ADMIN_TOKEN)", file));
  }
}
