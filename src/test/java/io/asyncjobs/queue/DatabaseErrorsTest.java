package io.asyncjobs.queue;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import org.hibernate.exception.JDBCConnectionException;
import org.junit.jupiter.api.Test;

class DatabaseErrorsTest {

  @Test
  void shouldTellEveryWayThePoolSaysItCouldNotConnect() {
    // Agroal 3 words its acquisition timeouts two ways; the second passed as a fault of ours.
    assertThat(
            DatabaseErrors.isConnectionLost(
                new IllegalStateException(new SQLException("Sorry, acquisition timeout!"))))
        .isTrue();
    assertThat(
            DatabaseErrors.isConnectionLost(
                new SQLException("Acquisition timeout while waiting for new connection")))
        .isTrue();
    assertThat(
            DatabaseErrors.isConnectionLost(
                new JDBCConnectionException(
                    "could not read", new SQLException("I/O error", "08006"))))
        .isTrue();
    assertThat(DatabaseErrors.isConnectionLost(new SQLException("the server is starting", "57P03")))
        .isTrue();
    assertThat(DatabaseErrors.isConnectionLost(new SQLException("duplicate key", "23505")))
        .isFalse();
  }
}
