package io.warmmetal.api.boot;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.http.ApiError;

/**
 * How fast one boot token mints enrollment tokens: a leaky bucket per token in PostgreSQL (so every
 * replica shares it, serialized by the bucket's row lock: {@code boot_mint}, migration V22). Its
 * level drains at {@code perMinute}; each mint adds one; a mint that would take it over {@code
 * burst} is refused with 429 and the seconds until one more fits. A rack powering on at once fits
 * in the burst; a script minting in a loop does not.
 */
final class MintRate {
  private final Pool db;
  private final int burst;
  private final double perSecond;

  MintRate(Pool db, int burst, int perMinute) {
    this.db = db;
    this.burst = burst;
    this.perSecond = perMinute / 60.0;
  }

  /** Takes one mint for {@code tokenId}, or fails with 429 (Retry-After: when one more fits). */
  Future<Void> take(String tokenId) {
    return db.preparedQuery("SELECT ok, drained FROM boot_mint($1, $2, $3)")
        .execute(Tuple.of(tokenId, perSecond, (double) burst))
        .map(
            rows -> {
              Row r = rows.iterator().next();
              if (r.getBoolean("ok")) {
                return null;
              }
              double drained = r.getDouble("drained");
              long wait = (long) Math.ceil((drained + 1 - burst) / perSecond);
              throw ApiError.tooManyRequests(
                  "this boot token has minted its burst of "
                      + burst
                      + " enrollment tokens; it mints "
                      + Math.round(perSecond * 60)
                      + " a minute"
                      + " (WARMMETAL_BOOT_MINT_BURST, WARMMETAL_BOOT_MINTS_PER_MINUTE): retry in "
                      + Math.max(1, wait)
                      + " s",
                  wait);
            });
  }
}
