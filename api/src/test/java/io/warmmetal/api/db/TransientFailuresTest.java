package io.warmmetal.api.db;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.impl.NoStackTraceThrowable;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.ClosedConnectionException;
import java.io.IOException;
import java.net.ConnectException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** What a retry can outlive (a 503), and what it cannot (a 4xx or a 500). */
class TransientFailuresTest {

  @ParameterizedTest(name = "SQLSTATE {0}: transient {1}")
  @CsvSource({
    "08006, true", "08001, true", "53300, true", "57P01, true", "57P03, true", "58030, true",
    "40001, true", "40P01, true", "23505, false", "22021, false", "42P01, false", "40002, false"
  })
  void byTheDatabasesErrorCode(String sqlState, boolean transientFailure) {
    assertThat(TransientFailures.isTransient(new PgException("x", "FATAL", sqlState, null)))
        .isEqualTo(transientFailure);
  }

  @Test
  void lostAndRefusedConnectionsClosedPoolsAndTimeouts() {
    assertThat(TransientFailures.isTransient(new ConnectException("Connection refused"))).isTrue();
    assertThat(TransientFailures.isTransient(ClosedConnectionException.INSTANCE)).isTrue();
    assertThat(
            TransientFailures.isTransient(
                new NoStackTraceThrowable("Connection is not active now, current status: CLOSED")))
        .isTrue();
    assertThat(
            TransientFailures.isTransient(
                new NoStackTraceThrowable("Timeout waiting for connection")))
        .isTrue();
    assertThat(TransientFailures.isTransient(new IllegalStateException("Pool closed"))).isTrue();
    assertThat(TransientFailures.isTransient(new TimeoutException())).isTrue();
    // A write to a connection PostgreSQL dropped, as the JDK's socket reports it (seen by
    // OutageTest as a 500).
    assertThat(TransientFailures.isTransient(new IOException("Connection reset by peer"))).isTrue();
    assertThat(TransientFailures.isTransient(new IOException("Broken pipe"))).isTrue();
    assertThat(
            TransientFailures.isTransient(new CompletionException(new ConnectException("refused"))))
        .isTrue();
  }

  @Test
  void bugsAreNot() {
    assertThat(TransientFailures.isTransient(new NullPointerException())).isFalse();
    assertThat(TransientFailures.isTransient(new IllegalArgumentException("bad"))).isFalse();
    assertThat(TransientFailures.isTransient(new IllegalStateException("no such state"))).isFalse();
    assertThat(TransientFailures.isTransient(new IOException("No space left on device"))).isFalse();
    assertThat(TransientFailures.isTransient(null)).isFalse();
  }
}
