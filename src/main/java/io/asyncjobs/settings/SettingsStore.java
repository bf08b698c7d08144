package io.asyncjobs.settings;

import io.agroal.api.AgroalDataSource;
import io.asyncjobs.config.JobsConfig;
import io.asyncjobs.config.ServiceSettings;
import io.asyncjobs.time.Clock;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

/**
 * Per-service settings: the configured ones with an admin's run-time overrides applied. The
 * overrides live in the {@code service_settings} table, so every replica sees the same values and
 * the owner picks up a change on its next tick.
 */
@ApplicationScoped
public class SettingsStore {

  /** SettingsGetOne: the stored overrides of one service. */
  private static final String SETTINGS_GET_ONE =
      """
      SELECT retention_seconds, max_concurrent, job_timeout_seconds, max_retries, claim_order,
             max_pending_per_owner, max_running_per_owner, max_attempts
        FROM service_settings
       WHERE service = ?
      """;

  /**
   * SettingsGetInForce: the stored overrides of one service (nulls without any) and whether it is
   * paused, in one round trip: the owner reads this every tick.
   */
  private static final String SETTINGS_GET_IN_FORCE =
      """
      SELECT s.retention_seconds, s.max_concurrent, s.job_timeout_seconds, s.max_retries,
             s.claim_order, s.max_pending_per_owner, s.max_running_per_owner, s.max_attempts,
             p.service IS NOT NULL
        FROM (SELECT ?::text AS service) k
        LEFT JOIN service_settings s ON s.service = k.service
        LEFT JOIN service_pauses p ON p.service = k.service
      """;

  /** SettingsUpsert: replaces every override of one service (null clears one). */
  private static final String SETTINGS_UPSERT =
      """
      INSERT INTO service_settings AS s
             (service, retention_seconds, max_concurrent, job_timeout_seconds, max_retries,
              claim_order, max_pending_per_owner, max_running_per_owner, max_attempts,
              updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (service) DO UPDATE
         SET retention_seconds = EXCLUDED.retention_seconds,
             max_concurrent = EXCLUDED.max_concurrent,
             job_timeout_seconds = EXCLUDED.job_timeout_seconds,
             max_retries = EXCLUDED.max_retries,
             claim_order = EXCLUDED.claim_order,
             max_pending_per_owner = EXCLUDED.max_pending_per_owner,
             max_running_per_owner = EXCLUDED.max_running_per_owner,
             max_attempts = EXCLUDED.max_attempts,
             updated_at = EXCLUDED.updated_at
      """;

  /**
   * EffectiveRetentionEnd: {@link #effective}'s retention as SQL, for a statement that should not
   * spend a round trip on reading the overrides first (every enqueue). Its parameters: when the
   * retention starts, the service, and the configured retention in seconds; an override of the
   * service wins over the configured value, as in {@link SettingsOverride#applyTo}.
   */
  public static final String EFFECTIVE_RETENTION_END =
      "(?::timestamptz + make_interval(secs => COALESCE((SELECT s.retention_seconds"
          + " FROM service_settings s WHERE s.service = ?), ?)::double precision))";

  /**
   * Binds {@link #EFFECTIVE_RETENTION_END}'s three parameters from index {@code at}: retention of
   * {@code service} starting at {@code start}.
   *
   * @return the index after them
   */
  public int bindRetentionEnd(PreparedStatement ps, int at, String service, Instant start)
      throws SQLException {
    ps.setObject(at, OffsetDateTime.ofInstant(start, ZoneOffset.UTC));
    ps.setString(at + 1, service);
    ps.setLong(at + 2, configured(service).retention().toSeconds());
    return at + 3;
  }

  private final AgroalDataSource dataSource;
  private final JobsConfig config;
  private final Clock clock;

  SettingsStore(AgroalDataSource dataSource, JobsConfig config, Clock clock) {
    this.dataSource = dataSource;
    this.config = config;
    this.clock = clock;
  }

  /** The settings from configuration alone, before any run-time override. */
  public ServiceSettings configured(String service) {
    return ServiceSettings.fromConfig(config, service);
  }

  /**
   * The settings in force: configuration with the stored overrides applied, and whether an admin
   * paused the service ({@link PauseStore}), read together in one statement.
   */
  public ServiceSettings effective(String service) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(SETTINGS_GET_IN_FORCE)) {
      ps.setString(1, service);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return read(rs).applyTo(configured(service)).withPaused(rs.getBoolean(9));
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not read the settings of " + service, e);
    }
  }

  /** The stored overrides of a service; {@link SettingsOverride#NONE} when it has none. */
  public SettingsOverride overrides(String service) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(SETTINGS_GET_ONE)) {
      ps.setString(1, service);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? read(rs) : SettingsOverride.NONE;
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not read the settings of " + service, e);
    }
  }

  /** The overrides in the first seven columns of the current row. */
  private static SettingsOverride read(ResultSet rs) throws SQLException {
    return new SettingsOverride(
        rs.getObject(1, Long.class),
        rs.getObject(2, Integer.class),
        rs.getObject(3, Long.class),
        rs.getObject(4, Integer.class),
        rs.getString(5),
        rs.getObject(6, Integer.class),
        rs.getObject(7, Integer.class),
        rs.getObject(8, Integer.class));
  }

  /** Replaces the stored overrides of a service; they apply from the owner's next tick. */
  public void update(String service, SettingsOverride override) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(SETTINGS_UPSERT)) {
      ps.setString(1, service);
      setNullable(ps, 2, override.retentionSeconds(), Types.BIGINT);
      setNullable(ps, 3, override.maxConcurrent(), Types.INTEGER);
      setNullable(ps, 4, override.jobTimeoutSeconds(), Types.BIGINT);
      setNullable(ps, 5, override.maxRetries(), Types.INTEGER);
      setNullable(ps, 6, override.claimOrder(), Types.VARCHAR);
      setNullable(ps, 7, override.maxPendingPerOwner(), Types.INTEGER);
      setNullable(ps, 8, override.maxRunningPerOwner(), Types.INTEGER);
      setNullable(ps, 9, override.maxAttempts(), Types.INTEGER);
      ps.setObject(10, OffsetDateTime.ofInstant(clock.now(), ZoneOffset.UTC));
      ps.executeUpdate();
    } catch (SQLException e) {
      throw new IllegalStateException("could not store the settings of " + service, e);
    }
  }

  private static void setNullable(PreparedStatement ps, int index, Object value, int type)
      throws SQLException {
    if (value == null) {
      ps.setNull(index, type);
    } else {
      ps.setObject(index, value);
    }
  }
}
