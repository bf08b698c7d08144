package io.asyncjobs.queue;

import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.Locale;

/**
 * Tells a failure of the database connection (the server restarted, the session was terminated, the
 * pool could not connect) from a refusal of a statement. The first says nothing about the job or
 * the write, which may simply be tried again; the second does.
 */
public final class DatabaseErrors {

  private DatabaseErrors() {}

  /**
   * Whether {@code failure}, or anything in its cause chain, is an SQL error of the connection:
   * SQLSTATE class 08 (connection exception), 57P01-57P03 (the server is shutting down, crashed, or
   * not accepting connections yet), or a pool that could not hand out a connection in time.
   */
  public static boolean isConnectionLost(Throwable failure) {
    for (Throwable e = failure; e != null; e = e.getCause() == e ? null : e.getCause()) {
      if (e instanceof SQLTransientConnectionException) {
        return true;
      }
      if (e instanceof SQLException sql) {
        String state = sql.getSQLState();
        if (state != null && (state.startsWith("08") || state.matches("57P0[123]"))) {
          return true;
        }
        String message = String.valueOf(sql.getMessage()).toLowerCase(Locale.ROOT);
        // Agroal's acquisition timeouts ("Acquisition timeout while waiting for new connection",
        // "Sorry, acquisition timeout!") and a closed connection carry no SQLSTATE.
        if (state == null
            && (message.contains("acquisition timeout") || message.contains("has been closed"))) {
          return true;
        }
      }
    }
    return false;
  }
}
