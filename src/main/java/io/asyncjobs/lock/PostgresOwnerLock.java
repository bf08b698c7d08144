package io.asyncjobs.lock;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * The owner lock as a PostgreSQL session-level advisory lock, held on one dedicated connection that
 * never goes back to a pool. PostgreSQL drops the lock with the session, so a dead process or a
 * lost connection frees it at once; each holding takes its fencing epoch from {@code
 * jobs_owner_epoch_seq}. A single thread tries (non-owner) or confirms (owner) the lock every retry
 * period; an owner whose last confirmation is older than the renew deadline stops claiming on its
 * own.
 */
public final class PostgresOwnerLock implements OwnerLock {

  private static final Logger LOG = Logger.getLogger(PostgresOwnerLock.class);

  /** LockTryAcquire: takes the lock if nobody holds it; never waits. */
  private static final String LOCK_TRY_ACQUIRE = "SELECT pg_try_advisory_lock(?)";

  /** LockConfirm: whether this session still holds the lock (a bigint key spans classid, objid). */
  private static final String LOCK_CONFIRM =
      """
      SELECT count(*) FROM pg_locks
       WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted AND objsubid = 1
         AND ((classid::bigint << 32) | objid::bigint) = ?
      """;

  private final String url;
  private final Properties connectionProperties;
  private final long key;
  private final String identity;
  private final Duration retryPeriod;
  private final Holding holding;
  private final LockMetrics metrics;
  private final ScheduledExecutorService timer;

  /** Touched only under this object's monitor. */
  private Connection connection;

  private volatile boolean released;

  /**
   * A lock candidate; call {@link #start()} to begin competing.
   *
   * @param url JDBC URL of the jobs database
   * @param user database user, or null
   * @param password database password, or null
   * @param name the lock's name; its key is derived from it
   * @param identity this replica's name
   * @param renewDeadline how long a confirmation is trusted
   * @param retryPeriod how often to try or confirm
   * @param metrics where renewals and changes are counted
   */
  public PostgresOwnerLock(
      String url,
      String user,
      String password,
      String name,
      String identity,
      Duration renewDeadline,
      Duration retryPeriod,
      LockMetrics metrics) {
    this.url = url;
    this.connectionProperties = new Properties();
    if (user != null) {
      connectionProperties.setProperty("user", user);
    }
    if (password != null) {
      connectionProperties.setProperty("password", password);
    }
    connectionProperties.setProperty("ApplicationName", "async-jobs owner lock");
    connectionProperties.setProperty("tcpKeepAlive", "true");
    connectionProperties.setProperty("connectTimeout", "5");
    // A query that hangs longer than the deadline has lost the lock anyway.
    connectionProperties.setProperty(
        "socketTimeout", Long.toString(Math.max(1, renewDeadline.toSeconds())));
    this.key = keyOf(name);
    this.identity = identity;
    this.retryPeriod = retryPeriod;
    this.holding = new Holding(identity, renewDeadline, metrics);
    this.metrics = metrics;
    this.timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread thread = new Thread(r, "jobs-owner-lock");
              thread.setDaemon(true);
              return thread;
            });
  }

  /** Makes a first attempt now, then one every retry period. */
  public void start() {
    attempt();
    timer.scheduleWithFixedDelay(
        this::attempt, retryPeriod.toMillis(), retryPeriod.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** Tries (or confirms) right away, for example because the previous owner announced a release. */
  @Override
  public void attemptSoon() {
    if (!released) {
      timer.execute(this::attempt);
    }
  }

  @Override
  public boolean isOwner() {
    return holding.trusted();
  }

  @Override
  public long epoch() {
    return holding.epoch();
  }

  @Override
  public String identity() {
    return identity;
  }

  @Override
  public OwnerStatus status() {
    return holding.status("postgres");
  }

  @Override
  public synchronized void release() {
    if (released) {
      return;
    }
    released = true;
    timer.shutdownNow();
    if (holding.held() && connection != null) {
      try (PreparedStatement unlock = connection.prepareStatement("SELECT pg_advisory_unlock(?)")) {
        unlock.setLong(1, key);
        unlock.execute();
        LOG.infof("Released the owner lock (epoch %d)", holding.epoch());
      } catch (SQLException e) {
        LOG.warnf("Could not release the owner lock cleanly (%s); closing its connection", e);
      }
    }
    holding.end(null);
    closeConnection();
  }

  /** One try or confirmation; never throws. */
  synchronized void attempt() {
    if (released) {
      return;
    }
    try {
      if (connection == null || connection.isClosed()) {
        connection = DriverManager.getConnection(url, connectionProperties);
      }
      if (holding.held()) {
        confirm();
      } else {
        tryAcquire();
      }
    } catch (SQLException e) {
      if (holding.held()) {
        metrics.renewalFailed();
        holding.end("its connection failed: " + e.getMessage());
      } else {
        LOG.debugf("Owner lock attempt failed: %s", e.getMessage());
      }
      closeConnection();
    }
  }

  private void tryAcquire() throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(LOCK_TRY_ACQUIRE)) {
      ps.setLong(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        if (!rs.getBoolean(1)) {
          return;
        }
      }
    }
    try (PreparedStatement ps =
            connection.prepareStatement("SELECT nextval('jobs_owner_epoch_seq')");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      holding.begin(rs.getLong(1), "PostgreSQL advisory lock");
    }
  }

  private void confirm() throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(LOCK_CONFIRM)) {
      ps.setLong(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        if (rs.getLong(1) == 1) {
          holding.confirmed();
          return;
        }
      }
    }
    metrics.renewalFailed();
    holding.end("the session no longer holds it");
  }

  private void closeConnection() {
    if (connection != null) {
      try {
        connection.close();
      } catch (SQLException e) {
        // Closing a broken connection: nothing more to do.
      }
      connection = null;
    }
  }

  /**
   * The advisory lock key: the first 63 bits of the name's SHA-256, so unrelated applications' keys
   * do not collide by accident, and never negative, so it can be compared with what pg_locks shows.
   */
  static long keyOf(String name) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256")
              .digest(("async-jobs:" + name).getBytes(StandardCharsets.UTF_8));
      long value = 0;
      for (int i = 0; i < 8; i++) {
        value = (value << 8) | (digest[i] & 0xff);
      }
      return value & Long.MAX_VALUE;
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }
}
