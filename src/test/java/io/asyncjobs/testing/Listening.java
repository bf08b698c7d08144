package io.asyncjobs.testing;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.List;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * A pooled connection that listens on one channel for a test, and stops listening when closed, so
 * that it goes back to the pool as it came.
 */
public final class Listening implements AutoCloseable {

  private final Connection connection;

  public Listening(DataSource dataSource, String channel) throws SQLException {
    connection = dataSource.getConnection();
    try (Statement s = connection.createStatement()) {
      s.execute("LISTEN " + channel);
    } catch (SQLException | RuntimeException e) {
      connection.close();
      throw e;
    }
  }

  /** The payloads received since the last call, waiting up to {@code millis} for the first. */
  public List<String> received(int millis) throws SQLException {
    PGNotification[] got = connection.unwrap(PGConnection.class).getNotifications(millis);
    return got == null ? List.of() : Arrays.stream(got).map(PGNotification::getParameter).toList();
  }

  @Override
  public void close() throws SQLException {
    try (Statement s = connection.createStatement()) {
      s.execute("UNLISTEN *");
    } finally {
      connection.close();
    }
  }
}
