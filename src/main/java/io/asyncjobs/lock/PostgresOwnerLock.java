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
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.jboss.logging.Logger;
import org.postgresql.PGConnection;

/**
 * The owner lock as a PostgreSQL session-level advisory lock, held on one dedicated connection that
 * never goes back to a pool. PostgreSQL drops the lock with the session, so a dead process or a
 * lost connection frees it at once; each holding takes its fencing epoch through {@link Epochs} on
 * that same connection. A single thread tries (non-owner) or confirms (owner) the lock every retry
 * period. When the session breaks, the owner claims nothing but keeps its running jobs until the
 * deadline of its last confirmation and tries to take the lock back; taking it back gives a new
 * epoch, under which the engine adopts the jobs it is still running. Should another replica hold it
 * instead, the holding is lost at once.
 */
public final class PostgresOwnerLock extends HeldLock {

  private static final Logger LOG = Logger.getLogger(PostgresOwnerLock.class);

  /** LockTryAcquire: takes the lock if nobody holds it; never waits. */
  private static final String LOCK_TRY_ACQUIRE = "SELECT pg_try_advisory_lock(?)";

  /** LockRelease: gives the lock up, leaving the session open. */
  private static final String LOCK_RELEASE = "SELECT pg_advisory_unlock(?)";

  /** LockConfirm: whether this session still holds the lock (a bigint key spans classid, objid). */
  private static final String LOCK_CONFIRM =
      """
      SELECT count(*) FROM pg_locks
       WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted AND objsubid = 1
         AND ((classid::bigint << 32) | objid::bigint) = ?
      """;

  /** Longest an owner waits on its connection at a time between attempts. */
  private static final long WATCH_SLICE_MILLIS = 250;

  /** LockHolder: the backend holding the lock, if any. */
  private static final String LOCK_HOLDER =
      """
      SELECT pid FROM pg_locks
       WHERE locktype = 'advisory' AND granted AND objsubid = 1
         AND ((classid::bigint << 32) | objid::bigint) = ?
      """;

  private final String url;
  private final Properties connectionProperties;
  private final long key;
  private final Duration retryPeriod;
  private final Duration settle;
  private final long stalledAfterNanos;
  private final LongSupplier nanos;
  private final LockMetrics metrics;
  private final ScheduledExecutorService timer;

  /** Changed only under this object's monitor; read by the wait between attempts. */
  private volatile Connection connection;

  private final Semaphore soon = new Semaphore(0);

  /** The server process of the session the lock was last taken on; touched by the lock thread. */
  private int oldBackendPid;

  private volatile boolean released;
  private volatile long lastAttemptNanos;

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
   * @param takeoverMargin added to the renew deadline before a new holder treats the jobs of an
   *     earlier one as abandoned: the earlier holder may take that long to notice and interrupt
   *     them
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
      Duration takeoverMargin,
      LockMetrics metrics) {
    // A lone lock: its own name is the base name its session is known by.
    this(
        url,
        user,
        password,
        name,
        name,
        identity,
        renewDeadline,
        retryPeriod,
        takeoverMargin,
        metrics);
  }

  /**
   * As above, one of several shard locks whose names begin with {@code baseName}: their sessions
   * name the replica among the {@link PostgresMembers} of that base name.
   */
  public PostgresOwnerLock(
      String url,
      String user,
      String password,
      String baseName,
      String name,
      String identity,
      Duration renewDeadline,
      Duration retryPeriod,
      Duration takeoverMargin,
      LockMetrics metrics) {
    this(
        url,
        user,
        password,
        baseName,
        name,
        identity,
        renewDeadline,
        retryPeriod,
        takeoverMargin,
        metrics,
        System::nanoTime);
  }

  PostgresOwnerLock(
      String url,
      String user,
      String password,
      String baseName,
      String name,
      String identity,
      Duration renewDeadline,
      Duration retryPeriod,
      Duration takeoverMargin,
      LockMetrics metrics,
      LongSupplier nanos) {
    super(
        "postgres",
        name,
        identity,
        new Holding(identity, renewDeadline, retryPeriod, nanos, metrics));
    this.url = url;
    this.connectionProperties = new Properties();
    if (user != null) {
      connectionProperties.setProperty("user", user);
    }
    if (password != null) {
      connectionProperties.setProperty("password", password);
    }
    // The replicas' lock sessions are also how each one learns who is alive (PostgresMembers).
    connectionProperties.setProperty(
        "ApplicationName", PostgresMembers.applicationName(baseName, identity));
    connectionProperties.setProperty("tcpKeepAlive", "true");
    connectionProperties.setProperty("connectTimeout", "5");
    // A query that hangs longer than the deadline has lost the lock anyway.
    connectionProperties.setProperty(
        "socketTimeout", Long.toString(Math.max(1, renewDeadline.toSeconds())));
    this.key = keyOf(name);
    this.retryPeriod = retryPeriod;
    // The session of an earlier holder may have ended a moment after its last confirmation, and
    // that
    // holder goes on working until that confirmation's deadline, then needs a moment to interrupt.
    this.settle = renewDeadline.plus(takeoverMargin);
    // An attempt may wait for a connection (5 s) and a query (the socket timeout) before failing.
    this.stalledAfterNanos =
        retryPeriod.multipliedBy(3).plus(renewDeadline).plusSeconds(5).toNanos();
    this.nanos = nanos;
    this.metrics = metrics;
    this.lastAttemptNanos = nanos.getAsLong();
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
    timer.scheduleWithFixedDelay(this::cycle, 0, 1, TimeUnit.MILLISECONDS);
  }

  /** Tries (or confirms) right away, for example because the previous owner announced a release. */
  @Override
  public void attemptSoon() {
    soon.release();
  }

  /** Waits until the next attempt is due, then makes it. */
  private void cycle() {
    awaitNextAttempt();
    attempt();
  }

  /**
   * Waits one retry period. An owner waits on its lock connection itself, so that the moment the
   * server ends the session (terminated, restarted) it notices and takes the lock back, before any
   * other replica's next attempt; everyone else waits for the period or for {@link #attemptSoon()}.
   */
  private void awaitNextAttempt() {
    Connection watched = connection;
    if (holding.held() && watched != null) {
      // In short slices: release() needs the connection, and waits for the slice to end.
      long until = nanos.getAsLong() + retryPeriod.toNanos();
      try {
        PGConnection pg = watched.unwrap(PGConnection.class);
        for (long left = until - nanos.getAsLong();
            left > 0 && !released;
            left = until - nanos.getAsLong()) {
          pg.getNotifications((int) Math.max(1, Math.min(WATCH_SLICE_MILLIS, left / 1_000_000)));
        }
      } catch (SQLException e) {
        // The session broke, or was closed: attempt at once.
      }
      return;
    }
    try {
      soon.tryAcquire(retryPeriod.toMillis(), TimeUnit.MILLISECONDS);
      soon.drainPermits();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  boolean competing() {
    return !released && nanos.getAsLong() - lastAttemptNanos < stalledAfterNanos;
  }

  @Override
  public synchronized void release() {
    if (released) {
      return;
    }
    released = true;
    timer.shutdownNow();
    if (holding.held() && connection != null) {
      try (PreparedStatement unlock = connection.prepareStatement(LOCK_RELEASE)) {
        unlock.setLong(1, key);
        unlock.execute();
        LOG.infof("Released the owner lock (epoch %d)", holding.epoch());
      } catch (SQLException e) {
        LOG.warnf("Could not release the owner lock cleanly (%s); closing its connection", e);
      }
    }
    holding.lost(null);
    closeConnection();
  }

  @Override
  public synchronized void relinquish() {
    if (released || !holding.held() || connection == null) {
      return;
    }
    long epoch = holding.epoch();
    try (PreparedStatement unlock = connection.prepareStatement(LOCK_RELEASE)) {
      unlock.setLong(1, key);
      unlock.execute();
      holding.lost(null);
      LOG.infof("%s gave the lock %s up (epoch %d) for another replica", identity, name, epoch);
    } catch (SQLException e) {
      // Closing the session frees the lock as well.
      holding.lost(null);
      closeConnection();
      LOG.infof("%s gave the lock %s up (epoch %d) by closing its session", identity, name, epoch);
    }
  }

  /** One try or confirmation; never throws, so the timer never stops. */
  synchronized void attempt() {
    if (released) {
      return;
    }
    lastAttemptNanos = nanos.getAsLong();
    try {
      if (connection == null || connection.isClosed()) {
        connection = DriverManager.getConnection(url, connectionProperties);
      }
      long sent = nanos.getAsLong();
      if (holding.held()) {
        confirm(sent);
      } else if (wanted || holding.trust() != Trust.NONE) {
        // A broken session of a holding not yet lapsed is taken back whatever the balance says.
        tryAcquire(sent);
      }
    } catch (SQLException e) {
      boolean wasHeld = holding.held();
      if (wasHeld) {
        holding.broken("its connection failed: " + e.getMessage());
      } else {
        LOG.debugf("Owner lock attempt failed: %s", e.getMessage());
      }
      closeConnection();
      if (wasHeld) {
        // Try to take it back at once, before another replica's next attempt does: a blip of the
        // session then costs nothing (the jobs are adopted under the new epoch).
        retakeAfterBreak();
      }
    } catch (RuntimeException | Error e) {
      metrics.error();
      LOG.errorf(e, "Owner lock attempt failed unexpectedly; retrying in %s", retryPeriod);
      closeConnection();
    }
  }

  private void retakeAfterBreak() {
    try {
      connection = DriverManager.getConnection(url, connectionProperties);
      tryAcquire(nanos.getAsLong());
    } catch (SQLException e) {
      LOG.debugf("Could not take the owner lock back at once: %s", e.getMessage());
      closeConnection();
    }
  }

  private void tryAcquire(long sent) throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(LOCK_TRY_ACQUIRE)) {
      ps.setLong(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        if (!rs.getBoolean(1)) {
          if (holding.trust() != Trust.NONE) {
            if (heldByOurOldSession()) {
              // Our terminated session has not quite exited yet: try again in a moment.
              soon.release();
              return;
            }
            holding.lost("another replica holds it now");
          }
          return;
        }
      }
    }
    takeEpoch(sent, "PostgreSQL advisory lock");
    oldBackendPid = backendPid();
  }

  /** Whether the session still holding the lock is the one this replica held it on before. */
  private boolean heldByOurOldSession() throws SQLException {
    if (oldBackendPid == 0) {
      return false;
    }
    try (PreparedStatement ps = connection.prepareStatement(LOCK_HOLDER)) {
      ps.setLong(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getInt(1) == oldBackendPid;
      }
    }
  }

  private int backendPid() throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement("SELECT pg_backend_pid()");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getInt(1);
    }
  }

  private void confirm(long sent) throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(LOCK_CONFIRM)) {
      ps.setLong(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        if (rs.getLong(1) != 1) {
          holding.lost("the session no longer holds it");
          return;
        }
      }
    }
    if (holding.lapsed()) {
      // Confirmed, but so late that the engine gave its jobs up: start a new holding.
      takeEpoch(sent, "PostgreSQL advisory lock, confirmed after its deadline");
    } else {
      holding.confirmed(sent);
    }
  }

  /**
   * Takes a new epoch on the lock's own connection. Should that fail, closing the connection (the
   * caller does) gives the lock up, and the next attempt starts over.
   */
  private void takeEpoch(long sent, String what) throws SQLException {
    long epoch;
    try {
      epoch = Epochs.take(connection, name, identity);
    } catch (SQLException e) {
      metrics.error();
      LOG.warnf("%s took the owner lock but could not take a fencing epoch: %s", identity, e);
      throw e;
    }
    holding.begin(epoch, sent, what, settle);
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
  public static long keyOf(String name) {
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
