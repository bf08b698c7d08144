package io.asyncjobs.channels;

import io.agroal.api.AgroalDataSource;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * Sends a notification outside any other transaction. Notifications that must travel with a write
 * (a job enqueued) are sent by that write's own statement instead, so that they are delivered only
 * if it commits.
 */
@ApplicationScoped
public class Notifier {

  /** ChannelNotify: a notification on a channel, delivered when this statement commits. */
  private static final String CHANNEL_NOTIFY = "SELECT pg_notify(?, ?)";

  private final AgroalDataSource dataSource;

  Notifier(AgroalDataSource dataSource) {
    this.dataSource = dataSource;
  }

  /**
   * Sends {@code payload} on {@code channel}.
   *
   * @throws SQLException when the database could not be reached
   */
  public void send(String channel, String payload) throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(CHANNEL_NOTIFY)) {
      ps.setString(1, channel);
      ps.setString(2, payload);
      ps.execute();
    }
  }
}
