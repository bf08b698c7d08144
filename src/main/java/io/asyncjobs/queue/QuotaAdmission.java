package io.asyncjobs.queue;

import io.asyncjobs.settings.SettingsStore;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Admits new jobs under their owner's pending quota (a kind's {@code max-pending-per-owner}): in
 * the enqueuing transaction it takes the owner's lock before the insert and counts the owner's
 * pending jobs after it, refusing the whole enqueue with {@link QuotaExceededException} and a
 * retry-after from the kind's recent run times when they are over. {@link JobInserter} runs the
 * insert between the two.
 */
@ApplicationScoped
public class QuotaAdmission {

  /**
   * QuotaLock: serializes one owner's enqueues of one kind for the rest of the transaction, so that
   * the pending count read after the insert is exact however many enqueue at once.
   */
  private static final String QUOTA_LOCK =
      "SELECT pg_advisory_xact_lock(hashtextextended('quota:' || ? || ':' || ? || ':' || ?, 0))";

  /** QuotaPendingCount: one owner's pending jobs of one kind (the pending-by-owner index). */
  private static final String QUOTA_PENDING_COUNT =
      "SELECT count(*) FROM jobs WHERE kind = ? AND owner_kind = ? AND owner_id = ?"
          + " AND status = 'pending'";

  /** JobAverageRun: the kind's mean run time over its last 100 done jobs, in ms (null: none). */
  private static final String JOB_AVERAGE_RUN =
      "SELECT avg(duration_ms) FROM (SELECT duration_ms FROM jobs WHERE kind = ?"
          + " AND status = 'done' ORDER BY completed_at DESC LIMIT 100) recent";

  private final SettingsStore settings;

  /** Cached quota per kind: settings change at run time, so it is read again after a second. */
  private final Map<String, long[]> quotas = new ConcurrentHashMap<>();

  QuotaAdmission(SettingsStore settings) {
    this.settings = settings;
  }

  /**
   * The pending quota that binds an enqueue of {@code kind} for {@code owner}, or 0 when none does:
   * the job has no owner, the caller is exempt, or the kind sets no quota. Read at most once a
   * second per kind, so that the enqueue of a kind without a quota spends no round trip on it.
   */
  int limit(String kind, Owner owner, boolean exempt) {
    if (exempt || owner == null) {
      return 0;
    }
    long now = System.nanoTime();
    long[] cached = quotas.get(kind);
    if (cached != null && now - cached[1] < TimeUnit.SECONDS.toNanos(1)) {
      return (int) cached[0];
    }
    int limit = settings.effective(kind).maxPendingPerOwner();
    quotas.put(kind, new long[] {limit, now});
    return limit;
  }

  /** Takes the owner's quota lock of the kind until {@code c}'s transaction ends. */
  void lock(Connection c, String kind, Owner owner) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(QUOTA_LOCK)) {
      ps.setString(1, kind);
      ps.setString(2, owner.kind());
      ps.setString(3, owner.id());
      ps.execute();
    }
  }

  /**
   * Throws {@link QuotaExceededException} when the owner holds more than {@code limit} pending jobs
   * of the kind, counting those {@code c}'s transaction added; the caller then rolls it back.
   */
  void check(Connection c, String kind, Owner owner, int limit) throws SQLException {
    long pending;
    try (PreparedStatement ps = c.prepareStatement(QUOTA_PENDING_COUNT)) {
      ps.setString(1, kind);
      ps.setString(2, owner.kind());
      ps.setString(3, owner.id());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        pending = rs.getLong(1);
      }
    }
    if (pending > limit) {
      throw new QuotaExceededException(kind, limit, pending, retryAfter(c, kind, pending - limit));
    }
  }

  /**
   * About how long until {@code over} of the owner's pending jobs are done: the kind's recent mean
   * run time per job over its concurrency, at least 1 s and at most an hour.
   */
  private Duration retryAfter(Connection c, String kind, long over) throws SQLException {
    double meanMs = 1000;
    try (PreparedStatement ps = c.prepareStatement(JOB_AVERAGE_RUN)) {
      ps.setString(1, kind);
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next() && rs.getObject(1) != null) {
          meanMs = rs.getDouble(1);
        }
      }
    }
    int concurrency = Math.max(1, settings.effective(kind).maxConcurrent());
    long seconds = (long) Math.ceil(meanMs * over / concurrency / 1000.0);
    return Duration.ofSeconds(Math.max(1, Math.min(3600, seconds)));
  }
}
