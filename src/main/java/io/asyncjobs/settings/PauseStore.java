package io.asyncjobs.settings;

import io.agroal.api.AgroalDataSource;
import io.asyncjobs.time.Clock;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Which services an admin paused, in the {@code service_pauses} table: kept apart from the
 * overrides, so that resetting those never resumes a service. The owner reads a service's pause
 * with its settings every tick ({@link SettingsStore#effective}), so a pause holds across restarts
 * and handovers.
 */
@ApplicationScoped
public class PauseStore {

  /** The longest reason an admin may give, as the table's check allows. */
  public static final int MAX_REASON = 500;

  /** PauseInsert: pauses a service unless it is paused already (then the first pause stands). */
  private static final String PAUSE_INSERT =
      """
      INSERT INTO service_pauses (service, paused_at, paused_by, reason)
      VALUES (?, ?, ?, ?)
      ON CONFLICT (service) DO NOTHING
      """;

  /** PauseDelete: resumes a service. */
  private static final String PAUSE_DELETE = "DELETE FROM service_pauses WHERE service = ?";

  /** PauseGetOne: the pause of one service, if any. */
  private static final String PAUSE_GET_ONE =
      "SELECT paused_at, paused_by, reason FROM service_pauses WHERE service = ?";

  /** PauseGetAll: every paused service. */
  private static final String PAUSE_GET_ALL =
      "SELECT service, paused_at, paused_by, reason FROM service_pauses";

  /**
   * A service's pause.
   *
   * @param pausedAt when it was paused
   * @param pausedBy who paused it, or null
   * @param reason why, or null
   */
  public record Pause(Instant pausedAt, String pausedBy, String reason) {}

  private final AgroalDataSource dataSource;
  private final Clock clock;

  PauseStore(AgroalDataSource dataSource, Clock clock) {
    this.dataSource = dataSource;
    this.clock = clock;
  }

  /**
   * Pauses a service; pausing one that is paused already changes nothing.
   *
   * @return the pause in force now: this one, or the earlier one
   */
  public Pause pause(String service, String pausedBy, String reason) {
    if (reason != null && reason.length() > MAX_REASON) {
      throw new IllegalArgumentException("reason must be at most " + MAX_REASON + " characters");
    }
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(PAUSE_INSERT)) {
      ps.setString(1, service);
      ps.setObject(2, OffsetDateTime.ofInstant(clock.now(), ZoneOffset.UTC));
      ps.setString(3, pausedBy);
      ps.setString(4, reason);
      ps.executeUpdate();
    } catch (SQLException e) {
      throw new IllegalStateException("could not pause " + service, e);
    }
    return of(service)
        .orElseThrow(() -> new IllegalStateException(service + " was resumed meanwhile"));
  }

  /**
   * Resumes a service; resuming one that is not paused changes nothing.
   *
   * @return whether it was paused
   */
  public boolean resume(String service) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(PAUSE_DELETE)) {
      ps.setString(1, service);
      return ps.executeUpdate() > 0;
    } catch (SQLException e) {
      throw new IllegalStateException("could not resume " + service, e);
    }
  }

  /** The pause of a service, or empty when it runs. */
  public Optional<Pause> of(String service) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(PAUSE_GET_ONE)) {
      ps.setString(1, service);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next()
            ? Optional.of(
                new Pause(
                    rs.getObject(1, OffsetDateTime.class).toInstant(),
                    rs.getString(2),
                    rs.getString(3)))
            : Optional.empty();
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not read the pause of " + service, e);
    }
  }

  /**
   * Every paused service's pause, by service.
   *
   * @throws SQLException when the database cannot be read
   */
  public Map<String, Pause> all() throws SQLException {
    Map<String, Pause> paused = new HashMap<>();
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(PAUSE_GET_ALL);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        paused.put(
            rs.getString(1),
            new Pause(
                rs.getObject(2, OffsetDateTime.class).toInstant(),
                rs.getString(3),
                rs.getString(4)));
      }
    }
    return paused;
  }
}
