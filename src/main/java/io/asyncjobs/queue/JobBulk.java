package io.asyncjobs.queue;

import io.agroal.api.AgroalDataSource;
import io.asyncjobs.settings.SettingsStore;
import io.asyncjobs.time.Clock;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Event;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.UUID;

/**
 * Cancel or retry one job, or every job a filter matches (or only count them). A filter's jobs are
 * walked in uid order one kind and status at a time (the {@code (kind, status, uid)} index), {@link
 * #BATCH} at a time, each batch one statement and so its own short transaction: a match of millions
 * never holds one long transaction or its row locks. A batch does exactly what the single cancel or
 * retry does to each of its jobs: both use the same SET lists, {@link #CANCEL_SET} and {@link
 * #RETRY_SET}, which is why the single ones live here.
 */
@ApplicationScoped
public class JobBulk {

  /** Jobs one batch takes. */
  public static final int BATCH = 1000;

  /** Before every uid: where a walk starts. */
  private static final UUID FIRST = new UUID(0, 0);

  /**
   * Which jobs to act on; every field but the kinds and statuses is optional (null: any).
   *
   * @param kinds the kinds to walk, each on its own
   * @param statuses the statuses to walk, each on its own
   * @param owner only this owner's jobs
   * @param createdBefore only jobs created before this time
   * @param createdAfter only jobs created after this time
   */
  public record Filter(
      List<String> kinds,
      List<JobStatus> statuses,
      Owner owner,
      Instant createdBefore,
      Instant createdAfter) {

    /** The conditions after {@code kind = ? AND status = ?}, each with its parameters. */
    String conditions() {
      return (owner != null ? " AND owner_kind = ? AND owner_id = ?" : "")
          + (createdBefore != null ? " AND created_at < ?" : "")
          + (createdAfter != null ? " AND created_at > ?" : "");
    }
  }

  /**
   * What a bulk action did.
   *
   * @param matched jobs the filter matched
   * @param affected jobs cancelled or retried (0 in a dry run)
   * @param batches batches that matched any job
   */
  public record Outcome(long matched, long affected, int batches) {}

  private final AgroalDataSource dataSource;
  private final SettingsStore settings;
  private final Clock clock;
  private final QueueMetrics metrics;
  private final Event<JobsEnqueued> enqueued;

  JobBulk(
      AgroalDataSource dataSource,
      SettingsStore settings,
      Clock clock,
      QueueMetrics metrics,
      Event<JobsEnqueued> enqueued) {
    this.dataSource = dataSource;
    this.settings = settings;
    this.clock = clock;
    this.metrics = metrics;
    this.enqueued = enqueued;
  }

  /**
   * The SET list of a cancel, shared by JobCancelOne and the bulk cancel (JobCancelBatch), so that
   * both always do the same. A pending job fails at once; a running one is flagged for its owner to
   * stop. In the CASE expressions {@code status} is the value before the update. Its five
   * parameters, in order: the time (completed_at), {@link SettingsStore#EFFECTIVE_RETENTION_END}'s
   * three (the time, the kind, its configured retention in seconds), the time (updated_at).
   */
  private static final String CANCEL_SET =
      """
        status = CASE WHEN status = 'pending' THEN 'failed' ELSE status END,
        error = CASE WHEN status = 'pending' THEN 'cancelled on request' ELSE error END,
        completed_at = CASE WHEN status = 'pending' THEN ? ELSE completed_at END,
        expires_at = CASE WHEN status = 'pending' THEN\s"""
          + SettingsStore.EFFECTIVE_RETENTION_END
          + """
         ELSE expires_at END,
        cancel_requested = true,
        updated_at = ?
        """;

  /**
   * The SET list of a retry, shared by JobRetryOne and the bulk retry (JobRetryBatch), so that a
   * column added here is reset by both: a failed job starts over as pending, as if just enqueued,
   * its uid unchanged. A {@code run_after} still ahead holds it back again, as at its enqueue: the
   * status view shows that time, so the job must not start before it. Its five parameters, in
   * order: the time (is run_after ahead), the time (updated_at), then {@link
   * SettingsStore#EFFECTIVE_RETENTION_END}'s three (the time, the kind, its configured retention in
   * seconds).
   */
  private static final String RETRY_SET =
      " status = 'pending', error = NULL, result = NULL, retry_count = 0,"
          + " attempt = 0, attempts = NULL,"
          + " delayed_until = CASE WHEN run_after > ?::timestamptz THEN run_after END,"
          + " callback = NULL,"
          + " callback_due = NULL,"
          + " started_at = NULL, completed_at = NULL, duration_ms = NULL,"
          + " bytes_in = NULL, bytes_out = NULL, item_count = NULL,"
          + " progress = NULL, progress_items = NULL, progress_at = NULL,"
          + " cancel_requested = false, updated_at = ?, expires_at = "
          + SettingsStore.EFFECTIVE_RETENTION_END;

  /**
   * JobCancelOne: a pending job fails at once ("cancelled on request"); a running one is flagged
   * for its owner to stop. In the CASE expressions {@code status} is the value before the update. A
   * cancelled job is kept for its kind's effective retention from the cancel, as from a completion.
   */
  private static final String JOB_CANCEL_ONE =
      "UPDATE jobs SET "
          + CANCEL_SET
          + " WHERE uid = ? AND status IN ('pending', 'running')"
          + " RETURNING status";

  /**
   * JobRetryOne: a failed job starts over as pending, as if just enqueued (its uid keeps its place,
   * so it is claimed before newer jobs), and the owner is woken.
   */
  private static final String JOB_RETRY_ONE =
      "WITH retried AS ("
          + " UPDATE jobs SET "
          + RETRY_SET
          + "  WHERE uid = ? AND status = 'failed'"
          + " RETURNING kind, shard)"
          + " SELECT r.kind, pg_notify('"
          + JobQueue.ENQUEUED_CHANNEL
          + "', "
          + JobQueue.wakePayload("r")
          + " || '"
          + JobQueue.FROM_HEAD
          + "'), r.shard FROM retried r";

  /** JobGetKind: the kind of one job, by its uid. */
  private static final String JOB_GET_KIND = "SELECT kind FROM jobs WHERE uid = ?";

  /**
   * JobKindsPresent: every kind the table holds a job of, whichever replica runs it (or none does
   * any more). A loose scan of the {@code (kind, status, uid)} index: one probe per kind, however
   * many jobs each has.
   */
  static final String JOB_KINDS_PRESENT =
      """
      WITH RECURSIVE k AS (
        (SELECT kind FROM jobs ORDER BY kind LIMIT 1)
        UNION ALL
        SELECT (SELECT j.kind FROM jobs j WHERE j.kind > k.kind ORDER BY j.kind LIMIT 1)
          FROM k WHERE k.kind IS NOT NULL)
      SELECT kind FROM k WHERE kind IS NOT NULL
      """;

  /** The next batch's uids: the filter's jobs of one kind and status after the cursor. */
  private static String batch(Filter filter) {
    return "WITH batch AS (SELECT uid FROM jobs WHERE kind = ? AND status = ?"
        + filter.conditions()
        + " AND uid > ? ORDER BY uid LIMIT ?)";
  }

  /** The batch's size and last uid, the first two columns of every batch statement's answer. */
  private static final String BATCH_FIGURES =
      "SELECT (SELECT count(*) FROM batch), (SELECT uid FROM batch ORDER BY uid DESC LIMIT 1)";

  /** JobCountBatch: counts one batch, changing nothing (a dry run). */
  private static String countSql(Filter filter) {
    return batch(filter) + BATCH_FIGURES + ", 0";
  }

  /**
   * JobCancelBatch: cancels one batch as JobCancelOne cancels one job: a pending job fails at once,
   * a running one is flagged for its owner to stop. A job whose status changed since the walk read
   * it is cancelled only when its new status is still one the filter allows.
   */
  private static String cancelSql(Filter filter) {
    return batch(filter)
        + ", cancelled AS (UPDATE jobs SET "
        + CANCEL_SET
        + " WHERE uid IN (SELECT uid FROM batch) AND status = ANY (?::text[])"
        // A running job already asked to stop (by an earlier walk of this action, when it was
        // claimed between the pending and the running walk, or by a caller) is not counted again.
        // A pending one is cancelled whatever the flag says: no owner will act on it.
        + " AND NOT (status = 'running' AND cancel_requested) RETURNING 1) "
        + BATCH_FIGURES
        + ", (SELECT count(*) FROM cancelled)";
  }

  /**
   * JobRetryBatch: retries one batch as JobRetryOne retries one job (pending again, same uid), and
   * wakes the owner of each shard it touched, asking it to claim from the head.
   */
  private static String retrySql(Filter filter) {
    return batch(filter)
        + ", retried AS (UPDATE jobs SET "
        + RETRY_SET
        + " WHERE uid IN (SELECT uid FROM batch) AND status = 'failed' RETURNING kind, shard),"
        + " woken AS (SELECT pg_notify('"
        + JobQueue.ENQUEUED_CHANNEL
        + "', "
        + JobQueue.wakePayload("r")
        + " || '"
        + JobQueue.FROM_HEAD
        + "') FROM (SELECT DISTINCT kind, shard FROM retried) r) "
        + BATCH_FIGURES
        + ", (SELECT count(*) FROM retried), (SELECT count(*) FROM woken)";
  }

  /**
   * Cancels a job: a pending one fails at once and never runs; a running one is asked to stop, and
   * its owner interrupts and fails it on its next tick. Finished jobs stay as they are.
   */
  public CancelOutcome cancelJob(UUID uid) {
    Instant now = clock.now();
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_CANCEL_ONE)) {
      String kind = kindOf(c, uid);
      if (kind == null) {
        return CancelOutcome.NOT_FOUND;
      }
      ps.setObject(1, JobRows.timestamp(now));
      settings.bindRetentionEnd(ps, 2, kind, now);
      ps.setObject(5, JobRows.timestamp(now));
      ps.setObject(6, uid);
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next()) {
          return JobStatus.RUNNING.dbValue().equals(rs.getString(1))
              ? CancelOutcome.STOP_REQUESTED
              : CancelOutcome.CANCELLED;
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not cancel job " + uid, e);
    }
    // The job was there a statement ago (its kind was read) and neither pending nor running now.
    return CancelOutcome.ALREADY_FINISHED;
  }

  /**
   * Runs a failed job again: it becomes pending with its error, result, stats and retry count
   * cleared. Jobs in any other state are left alone.
   *
   * @return true when the job was failed and is pending now; false when it is not failed
   * @throws java.util.NoSuchElementException when there is no such job
   */
  public boolean retryJob(UUID uid) {
    Instant now = clock.now();
    String kind = null;
    String shard;
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_RETRY_ONE)) {
      kind = kindOf(c, uid);
      if (kind == null) {
        throw new NoSuchElementException("no job " + uid);
      }
      ps.setObject(1, JobRows.timestamp(now));
      ps.setObject(2, JobRows.timestamp(now));
      settings.bindRetentionEnd(ps, 3, kind, now);
      ps.setObject(6, uid);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return false;
        }
        shard = rs.getString(3);
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not retry job " + uid, e);
    }
    metrics.retried(kind);
    enqueued.fire(new JobsEnqueued(kind, shard, true));
    return true;
  }

  private static String kindOf(Connection c, UUID uid) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(JOB_GET_KIND)) {
      ps.setObject(1, uid);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  /**
   * The kinds of the jobs in the table, including those of kinds this replica does not run
   * (disabled here, or retired): a bulk action over every kind must reach them too.
   */
  public List<String> kindsPresent() {
    List<String> kinds = new ArrayList<>();
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_KINDS_PRESENT);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        kinds.add(rs.getString(1));
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not read the kinds of the jobs", e);
    }
    return kinds;
  }

  /** Counts the jobs the filter matches, batch by batch as a real run would, changing nothing. */
  public Outcome count(Filter filter) {
    return walk(filter, Action.COUNT);
  }

  /**
   * Cancels every job the filter matches: pending ones fail at once, running ones are asked to
   * stop.
   */
  public Outcome cancel(Filter filter) {
    return walk(filter, Action.CANCEL);
  }

  /** Retries every failed job the filter matches, and wakes their owners. */
  public Outcome retry(Filter filter) {
    return walk(filter, Action.RETRY);
  }

  private enum Action {
    COUNT,
    CANCEL,
    RETRY
  }

  private Outcome walk(Filter filter, Action action) {
    String sql =
        switch (action) {
          case COUNT -> countSql(filter);
          case CANCEL -> cancelSql(filter);
          case RETRY -> retrySql(filter);
        };
    String[] allowed = filter.statuses().stream().map(JobStatus::dbValue).toArray(String[]::new);
    long matched = 0;
    long affected = 0;
    int batches = 0;
    try (Connection c = dataSource.getConnection()) {
      for (String kind : filter.kinds()) {
        long retried = 0;
        for (JobStatus status : filter.statuses()) {
          UUID cursor = FIRST;
          while (true) {
            long[] figures = new long[2];
            cursor = oneBatch(c, sql, filter, action, kind, status, allowed, cursor, figures);
            if (figures[0] == 0) {
              break;
            }
            matched += figures[0];
            affected += figures[1];
            batches++;
            if (action == Action.RETRY) {
              retried += figures[1];
            }
            if (figures[0] < BATCH) {
              break;
            }
          }
        }
        if (retried > 0) {
          metrics.retried(kind, retried);
          enqueued.fire(new JobsEnqueued(kind, null, true));
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException(
          "a bulk "
              + action.name().toLowerCase(java.util.Locale.ROOT)
              + " failed after "
              + affected
              + " job(s)",
          e);
    }
    return new Outcome(matched, affected, batches);
  }

  /**
   * Runs one batch statement, committed on its own, and puts its size and the jobs it changed in
   * {@code figures}.
   *
   * @return the last uid of the batch: where the next one starts
   */
  private UUID oneBatch(
      Connection c,
      String sql,
      Filter filter,
      Action action,
      String kind,
      JobStatus status,
      String[] allowed,
      UUID cursor,
      long[] figures)
      throws SQLException {
    Instant now = clock.now();
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      int i = 1;
      ps.setString(i++, kind);
      ps.setString(i++, status.dbValue());
      if (filter.owner() != null) {
        ps.setString(i++, filter.owner().kind());
        ps.setString(i++, filter.owner().id());
      }
      if (filter.createdBefore() != null) {
        ps.setObject(i++, JobRows.timestamp(filter.createdBefore()));
      }
      if (filter.createdAfter() != null) {
        ps.setObject(i++, JobRows.timestamp(filter.createdAfter()));
      }
      ps.setObject(i++, cursor);
      ps.setInt(i++, BATCH);
      if (action == Action.CANCEL) {
        ps.setObject(i++, JobRows.timestamp(now));
        i = settings.bindRetentionEnd(ps, i, kind, now);
        ps.setObject(i++, JobRows.timestamp(now));
        ps.setArray(i, c.createArrayOf("text", allowed));
      } else if (action == Action.RETRY) {
        ps.setObject(i++, JobRows.timestamp(now));
        ps.setObject(i++, JobRows.timestamp(now));
        settings.bindRetentionEnd(ps, i, kind, now);
      }
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        figures[0] = rs.getLong(1);
        figures[1] = rs.getLong(3);
        UUID last = rs.getObject(2, UUID.class);
        return last == null ? cursor : last;
      }
    }
  }
}
