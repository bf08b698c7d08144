package io.asyncjobs.engine;

import io.agroal.api.AgroalDataSource;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobRows;
import io.asyncjobs.queue.JobStatus;
import io.asyncjobs.queue.JsonCodec;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * The engine's SQL: each statement is named (noun + verb), takes the current time as a parameter
 * and touches many rows in one round trip. Every write to a running row checks the fencing epoch,
 * so an owner that lost the lock cannot change what the next owner claimed.
 */
@ApplicationScoped
public class JobStore {

  private static final String JOB_COLUMNS = JobRows.COLUMNS;

  /**
   * JobClaimMany: the oldest pending jobs of a kind become running under this owner's epoch. One
   * statement; SKIP LOCKED lets a concurrent claimer (a stale owner) take other rows instead of
   * waiting. The partial index on pending rows serves the inner query. The uids are collected into
   * an array first so that the outer update looks them up by primary key whatever row count the
   * planner guesses for a LIMIT parameter.
   */
  private static final String JOB_CLAIM_MANY =
      """
      UPDATE jobs
         SET status = 'running', started_at = ?, updated_at = ?, epoch = ?
       WHERE uid = ANY (ARRAY(SELECT uid FROM jobs
                               WHERE kind = ? AND status = 'pending'
                               ORDER BY uid
                               LIMIT ?
                               FOR UPDATE SKIP LOCKED))
      RETURNING\s"""
          + JOB_COLUMNS;

  /**
   * JobClaimManyAfter: JobClaimMany for pending jobs newer than a cursor, the newest uid this owner
   * already claimed. Within a burst the head of the queue is a run of rows that just stopped being
   * pending; starting after the cursor skips it in one index descent, whichever index the planner
   * picks. Older pending rows (recovered orphans) are left to the tick's plain JobClaimMany.
   */
  private static final String JOB_CLAIM_MANY_AFTER =
      JOB_CLAIM_MANY.replace("AND status = 'pending'", "AND status = 'pending' AND uid > ?");

  /**
   * JobCompleteMany: writes the outcomes of finished tasks. A row is written only while it is still
   * running under the writer's epoch; the returned uids are the rows actually written. Retention
   * restarts at completion. Progress reported since the last progress write lands here too, and a
   * done job that reported a fraction shows it complete.
   */
  private static final String JOB_COMPLETE_MANY =
      """
      UPDATE jobs j
         SET status = c.status,
             result = c.result::jsonb,
             error = c.error,
             completed_at = c.completed_at,
             updated_at = c.completed_at,
             duration_ms = c.duration_ms,
             expires_at = c.completed_at + make_interval(secs => ?),
             bytes_in = c.bytes_in,
             bytes_out = c.bytes_out,
             item_count = c.item_count,
             progress = CASE WHEN c.status = 'done' AND COALESCE(c.progress, j.progress) IS NOT NULL
                             THEN 1 ELSE COALESCE(c.progress, j.progress) END,
             progress_items = COALESCE(c.progress_items, j.progress_items),
             progress_at = CASE WHEN c.progress IS NOT NULL OR c.progress_items IS NOT NULL
                                  OR (c.status = 'done' AND j.progress IS NOT NULL)
                                THEN c.completed_at ELSE j.progress_at END
        FROM unnest(?::uuid[], ?::text[], ?::text[], ?::text[], ?::timestamptz[], ?::bigint[],
                    ?::bigint[], ?::bigint[], ?::bigint[], ?::float8[], ?::bigint[])
             AS c(uid, status, result, error, completed_at, duration_ms, bytes_in, bytes_out,
                  item_count, progress, progress_items)
       WHERE j.uid = c.uid AND j.status = 'running' AND j.epoch = ?
      RETURNING j.uid
      """;

  /**
   * JobCompleteAndClaimMany: JobCompleteMany and JobClaimManyAfter in one statement, for the
   * wake-up path: one round trip and one commit hand back finished slots and fill them again. The
   * two updates touch disjoint rows (running and pending). The first column holds the uids whose
   * outcome was written; each row carries one claimed job (all null when none was claimed).
   */
  private static final String JOB_COMPLETE_AND_CLAIM_MANY =
      "WITH completed AS ("
          + JOB_COMPLETE_MANY.strip()
          + "), claimed AS ("
          + JOB_CLAIM_MANY_AFTER.strip()
          + ") SELECT (SELECT array_agg(uid) FROM completed) AS completed, k.*"
          + " FROM (SELECT 1) AS one LEFT JOIN claimed AS k ON true";

  /**
   * JobRescueMany: running rows of a kind that no task of this process works on were left by an
   * earlier owner (or their task vanished). Each goes back to pending with one more retry, or fails
   * once it has used up its retries. Rows stamped by a newer owner are left alone.
   */
  private static final String JOB_RESCUE_MANY =
      """
      UPDATE jobs
         SET status = CASE WHEN (retry_count < ? AND NOT cancel_requested) THEN 'pending'
                           ELSE 'failed' END,
             retry_count = CASE WHEN (retry_count < ? AND NOT cancel_requested)
                                THEN retry_count + 1 ELSE retry_count END,
             error = CASE WHEN cancel_requested THEN 'cancelled on request'
                          WHEN retry_count < ? THEN NULL
                          ELSE 'abandoned: its processor vanished ' || (retry_count + 1)
                               || ' times (max-retries ' || ? || ')' END,
             completed_at = CASE WHEN (retry_count < ? AND NOT cancel_requested) THEN NULL
                                 ELSE ? END,
             expires_at = CASE WHEN (retry_count < ? AND NOT cancel_requested) THEN expires_at
                               ELSE ?::timestamptz + make_interval(secs => ?) END,
             updated_at = ?
       WHERE kind = ? AND status = 'running'
         AND NOT (uid = ANY (?::uuid[]))
         AND (epoch IS NULL OR epoch <= ?)
      RETURNING status
      """;

  /** JobGetCancelRequestedMany: this owner's running jobs of a kind that a caller asked to stop. */
  private static final String JOB_GET_CANCEL_REQUESTED_MANY =
      """
      SELECT uid FROM jobs
       WHERE kind = ? AND status = 'running' AND cancel_requested AND epoch = ?
      """;

  /**
   * JobReleaseMany: on a graceful handover, running jobs this owner could not finish go back to
   * pending without counting a retry, so the next owner starts them first.
   */
  private static final String JOB_RELEASE_MANY =
      """
      UPDATE jobs
         SET status = 'pending', started_at = NULL, updated_at = ?
       WHERE uid = ANY (?::uuid[]) AND status = 'running' AND epoch = ?
      """;

  /**
   * JobProgressMany: writes the progress running jobs reported, each only while the job is still
   * running under the writer's epoch.
   */
  private static final String JOB_PROGRESS_MANY =
      """
      UPDATE jobs j
         SET progress = p.progress, progress_items = p.items, progress_at = ?
        FROM unnest(?::uuid[], ?::float8[], ?::bigint[]) AS p(uid, progress, items)
       WHERE j.uid = p.uid AND j.status = 'running' AND j.epoch = ?
      """;

  /** JobGetExpiredMany: finished jobs of a kind whose retention has passed, oldest expiry first. */
  private static final String JOB_GET_EXPIRED_MANY =
      "SELECT "
          + JOB_COLUMNS
          + """
           FROM jobs
          WHERE kind = ? AND status IN ('done', 'failed') AND expires_at <= ?
          ORDER BY expires_at
          LIMIT ?
          """;

  /** JobCountExpired: how many rows JobGetExpiredMany would page through; the same condition. */
  private static final String JOB_COUNT_EXPIRED =
      """
      SELECT count(*) FROM jobs
       WHERE kind = ? AND status IN ('done', 'failed') AND expires_at <= ?
      """;

  /** JobDeleteMany: removes swept jobs whose artifacts are gone. Never a pending or running one. */
  private static final String JOB_DELETE_MANY =
      "DELETE FROM jobs WHERE uid = ANY (?::uuid[]) AND status IN ('done', 'failed')";

  /** JobDeferExpiryMany: keeps jobs whose cleanup failed until a later sweep tries again. */
  private static final String JOB_DEFER_EXPIRY_MANY =
      "UPDATE jobs SET expires_at = ? WHERE uid = ANY (?::uuid[]) AND status IN ('done', 'failed')";

  private final AgroalDataSource dataSource;

  JobStore(AgroalDataSource dataSource) {
    this.dataSource = dataSource;
  }

  /**
   * Claims up to {@code limit} pending jobs of {@code kind}, oldest first.
   *
   * @param after only jobs with a larger uid, or null for all
   */
  public List<Job> claimMany(String kind, int limit, long epoch, Instant now, UUID after) {
    if (limit <= 0) {
      return List.of();
    }
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(after == null ? JOB_CLAIM_MANY : JOB_CLAIM_MANY_AFTER)) {
      int next = 1;
      ps.setObject(next++, timestamp(now));
      ps.setObject(next++, timestamp(now));
      ps.setLong(next++, epoch);
      ps.setString(next++, kind);
      if (after != null) {
        ps.setObject(next++, after);
      }
      ps.setInt(next, limit);
      List<Job> claimed = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          claimed.add(JobRows.read(rs, 0));
        }
      }
      return inUidOrder(claimed);
    } catch (SQLException e) {
      throw new IllegalStateException("JobClaimMany failed for kind " + kind, e);
    }
  }

  /**
   * Writes finished tasks' outcomes under {@code epoch}.
   *
   * @return the uids actually written; the others were no longer running under this epoch
   */
  public Set<UUID> completeMany(
      Collection<Completion> completions, long epoch, Duration retention) {
    if (completions.isEmpty()) {
      return Set.of();
    }
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_COMPLETE_MANY)) {
      bindCompletions(c, ps, completions, epoch, retention);
      return uids(ps);
    } catch (SQLException e) {
      throw new IllegalStateException("JobCompleteMany failed", e);
    }
  }

  /**
   * Writes finished tasks' outcomes and claims up to {@code limit} pending jobs with a uid larger
   * than {@code after}, in one statement.
   */
  public CompleteAndClaim completeAndClaimMany(
      String kind,
      Collection<Completion> completions,
      long epoch,
      Duration retention,
      int limit,
      Instant now,
      UUID after) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_COMPLETE_AND_CLAIM_MANY)) {
      int next = bindCompletions(c, ps, completions, epoch, retention);
      ps.setObject(next++, timestamp(now));
      ps.setObject(next++, timestamp(now));
      ps.setLong(next++, epoch);
      ps.setString(next++, kind);
      ps.setObject(next++, after);
      ps.setInt(next, limit);
      Set<UUID> written = new HashSet<>();
      List<Job> claimed = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          Array completed = rs.getArray(1);
          if (written.isEmpty() && completed != null) {
            for (Object uid : (Object[]) completed.getArray()) {
              written.add((UUID) uid);
            }
          }
          if (rs.getObject(2) != null) {
            claimed.add(JobRows.read(rs, 1));
          }
        }
      }
      return new CompleteAndClaim(written, inUidOrder(claimed));
    } catch (SQLException e) {
      throw new IllegalStateException("JobCompleteAndClaimMany failed for kind " + kind, e);
    }
  }

  /** Binds JobCompleteMany's parameters; returns the index of the next parameter. */
  private static int bindCompletions(
      Connection c,
      PreparedStatement ps,
      Collection<Completion> completions,
      long epoch,
      Duration retention)
      throws SQLException {
    int n = completions.size();
    UUID[] uids = new UUID[n];
    String[] statuses = new String[n];
    String[] results = new String[n];
    String[] errors = new String[n];
    String[] completedAt = new String[n];
    Long[] durations = new Long[n];
    Long[] bytesIn = new Long[n];
    Long[] bytesOut = new Long[n];
    Long[] items = new Long[n];
    Double[] fractions = new Double[n];
    Long[] progressItems = new Long[n];
    int i = 0;
    for (Completion done : completions) {
      if (done.lastProgress() != null) {
        fractions[i] = done.lastProgress().fraction();
        progressItems[i] = done.lastProgress().items();
      }
      uids[i] = done.uid();
      statuses[i] = done.status().dbValue();
      results[i] = JsonCodec.encode(done.result());
      errors[i] = done.error();
      completedAt[i] = done.completedAt().toString();
      durations[i] = done.durationMs();
      bytesIn[i] = done.stat("bytes_in");
      bytesOut[i] = done.stat("bytes_out");
      items[i] = done.stat("item_count");
      i++;
    }
    ps.setLong(1, retention.toSeconds());
    ps.setArray(2, c.createArrayOf("uuid", uids));
    ps.setArray(3, c.createArrayOf("text", statuses));
    ps.setArray(4, c.createArrayOf("text", results));
    ps.setArray(5, c.createArrayOf("text", errors));
    ps.setArray(6, c.createArrayOf("timestamptz", completedAt));
    ps.setArray(7, c.createArrayOf("bigint", durations));
    ps.setArray(8, c.createArrayOf("bigint", bytesIn));
    ps.setArray(9, c.createArrayOf("bigint", bytesOut));
    ps.setArray(10, c.createArrayOf("bigint", items));
    ps.setArray(11, c.createArrayOf("float8", fractions));
    ps.setArray(12, c.createArrayOf("bigint", progressItems));
    ps.setLong(13, epoch);
    return 14;
  }

  /**
   * Recovers running rows of {@code kind} that are not in {@code inFlight}.
   *
   * @return how many went back to pending and how many failed
   */
  public RescueCounts rescueMany(
      String kind,
      Collection<UUID> inFlight,
      long epoch,
      int maxRetries,
      Duration retention,
      Instant now) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_RESCUE_MANY)) {
      OffsetDateTime ts = timestamp(now);
      ps.setInt(1, maxRetries);
      ps.setInt(2, maxRetries);
      ps.setInt(3, maxRetries);
      ps.setInt(4, maxRetries);
      ps.setInt(5, maxRetries);
      ps.setObject(6, ts);
      ps.setInt(7, maxRetries);
      ps.setObject(8, ts);
      ps.setLong(9, retention.toSeconds());
      ps.setObject(10, ts);
      ps.setString(11, kind);
      ps.setArray(12, c.createArrayOf("uuid", inFlight.toArray(UUID[]::new)));
      ps.setLong(13, epoch);
      int requeued = 0;
      int failed = 0;
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          if (JobStatus.PENDING.dbValue().equals(rs.getString(1))) {
            requeued++;
          } else {
            failed++;
          }
        }
      }
      return new RescueCounts(requeued, failed);
    } catch (SQLException e) {
      throw new IllegalStateException("JobRescueMany failed for kind " + kind, e);
    }
  }

  /** Writes reported progress of running jobs claimed under {@code epoch}; returns how many. */
  public int progressMany(Collection<ProgressReport> reports, long epoch, Instant now) {
    if (reports.isEmpty()) {
      return 0;
    }
    UUID[] uids = reports.stream().map(ProgressReport::uid).toArray(UUID[]::new);
    Double[] fractions = reports.stream().map(ProgressReport::fraction).toArray(Double[]::new);
    Long[] items = reports.stream().map(ProgressReport::items).toArray(Long[]::new);
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_PROGRESS_MANY)) {
      ps.setObject(1, timestamp(now));
      ps.setArray(2, c.createArrayOf("uuid", uids));
      ps.setArray(3, c.createArrayOf("float8", fractions));
      ps.setArray(4, c.createArrayOf("bigint", items));
      ps.setLong(5, epoch);
      return ps.executeUpdate();
    } catch (SQLException e) {
      throw new IllegalStateException("JobProgressMany failed", e);
    }
  }

  /**
   * Progress a running job reported.
   *
   * @param uid the job
   * @param fraction 0 to 1, or null when only items are known
   * @param items items done, or null
   */
  public record ProgressReport(UUID uid, Double fraction, Long items) {}

  /** The uids of this owner's running jobs of {@code kind} that a caller asked to stop. */
  public Set<UUID> cancelRequestedMany(String kind, long epoch) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_GET_CANCEL_REQUESTED_MANY)) {
      ps.setString(1, kind);
      ps.setLong(2, epoch);
      return uids(ps);
    } catch (SQLException e) {
      throw new IllegalStateException("JobGetCancelRequestedMany failed for kind " + kind, e);
    }
  }

  /** Puts this owner's unfinished running jobs back to pending; returns how many. */
  public int releaseMany(Collection<UUID> uids, long epoch, Instant now) {
    if (uids.isEmpty()) {
      return 0;
    }
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_RELEASE_MANY)) {
      ps.setObject(1, timestamp(now));
      ps.setArray(2, c.createArrayOf("uuid", uids.toArray(UUID[]::new)));
      ps.setLong(3, epoch);
      return ps.executeUpdate();
    } catch (SQLException e) {
      throw new IllegalStateException("JobReleaseMany failed", e);
    }
  }

  /** Finished jobs of {@code kind} whose expiry has passed, at most {@code limit}. */
  public List<Job> expiredMany(String kind, Instant now, int limit) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_GET_EXPIRED_MANY)) {
      ps.setString(1, kind);
      ps.setObject(2, timestamp(now));
      ps.setInt(3, limit);
      List<Job> expired = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          expired.add(JobRows.read(rs, 0));
        }
      }
      return expired;
    } catch (SQLException e) {
      throw new IllegalStateException("JobGetExpiredMany failed for kind " + kind, e);
    }
  }

  /** How many finished jobs of {@code kind} have expired by {@code now}. */
  public long countExpired(String kind, Instant now) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_COUNT_EXPIRED)) {
      ps.setString(1, kind);
      ps.setObject(2, timestamp(now));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      throw new IllegalStateException("JobCountExpired failed for kind " + kind, e);
    }
  }

  /** Deletes finished jobs; returns how many rows went. */
  public int deleteMany(Collection<UUID> uids) {
    return updateMany(JOB_DELETE_MANY, null, uids, "JobDeleteMany");
  }

  /** Moves the expiry of finished jobs to {@code until}. */
  public int deferExpiryMany(Collection<UUID> uids, Instant until) {
    return updateMany(JOB_DEFER_EXPIRY_MANY, until, uids, "JobDeferExpiryMany");
  }

  private int updateMany(String sql, Instant instant, Collection<UUID> uids, String name) {
    if (uids.isEmpty()) {
      return 0;
    }
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      int index = 1;
      if (instant != null) {
        ps.setObject(index++, timestamp(instant));
      }
      Array array = c.createArrayOf("uuid", uids.toArray(UUID[]::new));
      ps.setArray(index, array);
      return ps.executeUpdate();
    } catch (SQLException e) {
      throw new IllegalStateException(name + " failed", e);
    }
  }

  /** Runs a query whose first column is a uid and collects them. */
  private static Set<UUID> uids(PreparedStatement ps) throws SQLException {
    Set<UUID> uids = new HashSet<>();
    try (ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        uids.add(rs.getObject(1, UUID.class));
      }
    }
    return uids;
  }

  /** RETURNING has no order; PostgreSQL orders uuids as unsigned bytes, as their text does. */
  private static List<Job> inUidOrder(List<Job> jobs) {
    jobs.sort(Comparator.comparing(j -> j.uid.toString()));
    return jobs;
  }

  private static Instant instant(ResultSet rs, int column) throws SQLException {
    OffsetDateTime value = rs.getObject(column, OffsetDateTime.class);
    return value == null ? null : value.toInstant();
  }

  private static OffsetDateTime timestamp(Instant instant) {
    return OffsetDateTime.ofInstant(instant, ZoneOffset.UTC);
  }

  /**
   * What one JobCompleteAndClaimMany did.
   *
   * @param written uids whose outcome was written
   * @param claimed the jobs claimed, oldest first
   */
  public record CompleteAndClaim(Set<UUID> written, List<Job> claimed) {}

  /**
   * What one rescue did.
   *
   * @param requeued rows put back to pending
   * @param failed rows failed for having used up their retries
   */
  public record RescueCounts(int requeued, int failed) {}
}
