package io.asyncjobs.queue;

import io.agroal.api.AgroalDataSource;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The statements that write what became of tasks, each only while the row is still running under
 * the writer's fencing epoch: outcomes (JobCompleteMany), retries after the database went away
 * (JobRetryMany), failed attempts of transient failures (JobFailAttemptMany), work given up without
 * an outcome (JobReleaseMany), reported progress (JobProgressMany), and the read of which running
 * jobs a caller asked to stop (JobGetCancelRequestedMany). Each takes the current time as a
 * parameter and writes many rows in one round trip.
 */
@ApplicationScoped
public class JobOutcomes {

  /**
   * JobCompleteMany: writes the outcomes of finished tasks. A row is written only while it is still
   * running under the writer's epoch (an older epoch's outcome is still the truth about a job that
   * nobody else touched); the returned rows are those actually written, with the status written.
   * Retention restarts at completion. The start is written again: a job claimed ahead of a free
   * thread began later than its claim. Progress reported since the last progress write lands here
   * too, and a done job that reported a fraction shows it complete. {@link JobClaims}'s
   * JobCompleteAndClaimMany runs it too, in the same statement as its claim.
   *
   * <p>The update is {@code jobs_complete_many} (V34, its body V35): it finds the rows by key
   * through the primary key, whatever the statistics said when the session planned it. Joined to
   * its outcomes in the statement itself, a plan made while a dozen jobs ran read every running row
   * and scanned the outcomes once per row (37-75 ms for 450 outcomes beside 500 running jobs).
   * Parameters: the retention in seconds, one array per column of the outcomes, the epoch.
   */
  static final String COMPLETE =
      "SELECT uid, status FROM jobs_complete_many(?, ?::uuid[], ?::text[], ?::text[], ?::text[],"
          + " ?::timestamptz[], ?::timestamptz[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[],"
          + " ?::float8[], ?::bigint[], ?)";

  private static final String JOB_COMPLETE_MANY = COMPLETE;

  /**
   * The SET list JobRescueMany and JobRetryMany share: a running job goes back to pending with one
   * more retry while it has retries left and no cancel asked it to stop, and otherwise fails, as
   * cancelled or with {@code exhausted} (an SQL expression) as its error. Reads {@code j} (the job)
   * and {@code p} (max_retries, now, retention). JobRescueMany is {@link JobRecovery}'s.
   */
  static String putBackOrFail(String exhausted) {
    return """
        UPDATE jobs j
           SET status = CASE WHEN (j.retry_count < p.max_retries AND NOT j.cancel_requested)
                             THEN 'pending' ELSE 'failed' END,
               retry_count = CASE WHEN (j.retry_count < p.max_retries AND NOT j.cancel_requested)
                                  THEN j.retry_count + 1 ELSE j.retry_count END,
               error = CASE WHEN j.cancel_requested THEN 'cancelled on request'
                            WHEN j.retry_count < p.max_retries THEN NULL
                            ELSE %s END,
               started_at = CASE WHEN (j.retry_count < p.max_retries AND NOT j.cancel_requested)
                                 THEN NULL ELSE j.started_at END,
               completed_at = CASE WHEN (j.retry_count < p.max_retries AND NOT j.cancel_requested)
                                   THEN NULL ELSE p.now END,
               expires_at = CASE WHEN (j.retry_count < p.max_retries AND NOT j.cancel_requested)
                                 THEN j.expires_at
                                 ELSE p.now + make_interval(secs => p.retention) END,
               updated_at = p.now
        """
        .formatted(exhausted);
  }

  /**
   * JobRetryMany: jobs whose task failed because the database went away (their work never took
   * effect, or is repeated harmlessly) go back to pending with one more retry instead of failing,
   * or fail once their retries are used up. A job a cancel asked to stop fails as cancelled
   * instead, as in JobRescueMany: put back, it would run again, and no cancel would stop it (a
   * cancel asks the running job only once). Only rows still running under the writer's epoch.
   */
  private static final String JOB_RETRY_MANY =
      putBackOrFail(
              "r.error || ' (' || (j.retry_count + 1) || ' times; max-retries '"
                  + " || p.max_retries || ')'")
          + """
        FROM unnest(?::uuid[], ?::text[]) AS r(uid, error),
             (SELECT ?::int AS max_retries, ?::timestamptz AS now, ?::bigint AS retention) AS p
       WHERE j.uid = r.uid AND j.status = 'running' AND j.epoch = ?
      RETURNING j.uid, j.status
      """;

  /** How many failed attempts a job's {@code attempts} keeps, the latest ones. */
  public static final int ATTEMPTS_KEPT = 20;

  /**
   * Whether the attempt row {@code a} of job {@code j} goes back to pending (JobFailAttemptMany).
   */
  private static final String AGAIN = "(j.attempt + 1 < p.max_attempts AND NOT j.cancel_requested)";

  /**
   * JobFailAttemptMany: jobs whose task failed in a way the kind calls transient. Each counts one
   * more failed attempt and keeps it (error, start, end, when it is tried again) in {@code
   * attempts}, the last {@value #ATTEMPTS_KEPT} of them; while attempts are left under {@code
   * max_attempts} (and no cancel was asked for) it goes back to pending, delayed until its retry
   * time, so that only the due-time release makes it claimable again; otherwise it fails with the
   * attempt's error. Only rows still running under the writer's epoch.
   */
  private static final String JOB_FAIL_ATTEMPT_MANY =
      ("""
      UPDATE jobs j
         SET status = CASE WHEN AGAIN THEN 'pending' ELSE 'failed' END,
             attempt = j.attempt + 1,
             attempts = (SELECT jsonb_agg(k.e ORDER BY k.n) FROM (
                           SELECT x.e, x.n FROM jsonb_array_elements(
                               COALESCE(j.attempts, '[]'::jsonb) || jsonb_build_array(
                                 jsonb_build_object('attempt', j.attempt + 1, 'error', a.error,
                                   'started_at', a.started_at, 'ended_at', a.ended_at,
                                   'retry_at', CASE WHEN AGAIN THEN a.retry_at END)))
                             WITH ORDINALITY AS x(e, n)
                            ORDER BY x.n DESC LIMIT KEPT) AS k),
             delayed_until = CASE WHEN AGAIN THEN a.retry_at::timestamptz END,
             error = CASE WHEN AGAIN THEN NULL
                          WHEN j.cancel_requested THEN 'cancelled on request'
                          WHEN p.max_attempts > 1
                            THEN a.error || ' (attempt ' || (j.attempt + 1) || ' of '
                                 || GREATEST(p.max_attempts, j.attempt + 1) || ')'
                          ELSE a.error END,
             started_at = CASE WHEN AGAIN THEN NULL ELSE a.started_at::timestamptz END,
             completed_at = CASE WHEN AGAIN THEN NULL ELSE a.ended_at::timestamptz END,
             duration_ms = CASE WHEN AGAIN THEN NULL ELSE a.duration_ms END,
             expires_at = CASE WHEN AGAIN THEN j.expires_at
                               ELSE a.ended_at::timestamptz + make_interval(secs => p.retention) END,
             progress = CASE WHEN AGAIN THEN NULL ELSE j.progress END,
             progress_items = CASE WHEN AGAIN THEN NULL ELSE j.progress_items END,
             progress_at = CASE WHEN AGAIN THEN NULL ELSE j.progress_at END,
             updated_at = p.now
        FROM unnest(?::uuid[], ?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[])
               AS a(uid, error, started_at, ended_at, retry_at, duration_ms),
             (SELECT ?::int AS max_attempts, ?::timestamptz AS now, ?::bigint AS retention) AS p
       WHERE j.uid = a.uid AND j.status = 'running' AND j.epoch = ?
      RETURNING j.uid, j.status
      """)
          .replace("AGAIN", AGAIN)
          .replace("KEPT", Integer.toString(ATTEMPTS_KEPT));

  /** JobGetCancelRequestedMany: which of these running jobs a caller asked to stop. */
  private static final String JOB_GET_CANCEL_REQUESTED_MANY =
      "SELECT uid FROM jobs WHERE uid = ANY (?::uuid[]) AND status = 'running' AND cancel_requested";

  /**
   * JobReleaseMany: running jobs this owner stopped without an outcome (a graceful handover, or
   * work interrupted because the lock was lost) go back to pending without counting a retry, so the
   * next owner starts them first; a job whose cancel was requested fails as cancelled instead of
   * running again. Only rows still running under the given epoch.
   */
  private static final String JOB_RELEASE_MANY =
      """
      UPDATE jobs j
         SET status = CASE WHEN j.cancel_requested THEN 'failed' ELSE 'pending' END,
             error = CASE WHEN j.cancel_requested THEN 'cancelled on request' ELSE j.error END,
             started_at = CASE WHEN j.cancel_requested THEN j.started_at END,
             completed_at = CASE WHEN j.cancel_requested THEN p.now END,
             expires_at = CASE WHEN j.cancel_requested THEN p.now + make_interval(secs => p.retention)
                               ELSE j.expires_at END,
             updated_at = p.now
        FROM (SELECT ?::timestamptz AS now, ?::bigint AS retention) AS p
       WHERE j.uid = ANY (?::uuid[]) AND j.status = 'running' AND j.epoch = ?
      RETURNING j.uid, j.status
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

  private final AgroalDataSource dataSource;

  JobOutcomes(AgroalDataSource dataSource) {
    this.dataSource = dataSource;
  }

  /**
   * Writes finished tasks' outcomes under {@code epoch}. Should the batch be refused for what one
   * row holds (not for the connection), each outcome is written alone, and one that still cannot be
   * written fails its job with the reason instead.
   *
   * @return the rows actually written and the status each got; the others were no longer running
   *     under this epoch
   */
  public Map<UUID, JobStatus> completeMany(
      Collection<Completion> completions, long epoch, Duration retention) {
    if (completions.isEmpty()) {
      return Map.of();
    }
    try (Connection c = dataSource.getConnection()) {
      try {
        return complete(c, completions, epoch, retention);
      } catch (SQLException e) {
        if (DatabaseErrors.isConnectionLost(e)) {
          throw e;
        }
        if (completions.size() == 1) {
          return completeUnstorable(c, completions.iterator().next(), e, epoch, retention);
        }
        Map<UUID, JobStatus> written = new HashMap<>();
        for (Completion one : completions) {
          written.putAll(completeMany(List.of(one), epoch, retention));
        }
        return written;
      }
    } catch (SQLException e) {
      throw new StoreException("JobCompleteMany failed", e);
    }
  }

  /** A single outcome the database refused for its content: the job fails saying why. */
  private Map<UUID, JobStatus> completeUnstorable(
      Connection c, Completion completion, SQLException refusal, long epoch, Duration retention)
      throws SQLException {
    Completion failed =
        Completion.failed(
                completion.uid(),
                "its result could not be stored: " + refusal.getMessage(),
                completion.startedAt(),
                completion.completedAt())
            .withProgress(completion.lastProgress());
    return complete(c, List.of(failed), epoch, retention);
  }

  private static Map<UUID, JobStatus> complete(
      Connection c, Collection<Completion> completions, long epoch, Duration retention)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(JOB_COMPLETE_MANY)) {
      bindCompletions(c, ps, 1, completions, epoch, retention);
      return JobRows.statuses(ps);
    }
  }

  /**
   * Binds JobCompleteMany's parameters from {@code first}; returns the index of the next one. Also
   * bound by {@link JobClaims} inside JobCompleteAndClaimMany.
   */
  static int bindCompletions(
      Connection c,
      PreparedStatement ps,
      int first,
      Collection<Completion> completions,
      long epoch,
      Duration retention)
      throws SQLException {
    int n = completions.size();
    UUID[] uids = new UUID[n];
    String[] statuses = new String[n];
    String[] results = new String[n];
    String[] errors = new String[n];
    String[] startedAt = new String[n];
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
      startedAt[i] = done.startedAt().toString();
      completedAt[i] = done.completedAt().toString();
      durations[i] = done.durationMs();
      bytesIn[i] = done.stat("bytes_in");
      bytesOut[i] = done.stat("bytes_out");
      items[i] = done.stat("item_count");
      i++;
    }
    int next = first;
    ps.setLong(next++, retention.toSeconds());
    ps.setArray(next++, c.createArrayOf("uuid", uids));
    ps.setArray(next++, c.createArrayOf("text", statuses));
    ps.setArray(next++, c.createArrayOf("text", results));
    ps.setArray(next++, c.createArrayOf("text", errors));
    ps.setArray(next++, c.createArrayOf("timestamptz", startedAt));
    ps.setArray(next++, c.createArrayOf("timestamptz", completedAt));
    ps.setArray(next++, c.createArrayOf("bigint", durations));
    ps.setArray(next++, c.createArrayOf("bigint", bytesIn));
    ps.setArray(next++, c.createArrayOf("bigint", bytesOut));
    ps.setArray(next++, c.createArrayOf("bigint", items));
    ps.setArray(next++, c.createArrayOf("float8", fractions));
    ps.setArray(next++, c.createArrayOf("bigint", progressItems));
    ps.setLong(next++, epoch);
    return next;
  }

  /**
   * Puts jobs whose task failed because the database went away back to pending, counting a retry.
   *
   * @param errors each job's error, kept only should it fail for having used up its retries
   * @return the rows written and the status each got
   */
  public Map<UUID, JobStatus> retryMany(
      Map<UUID, String> errors, long epoch, int maxRetries, Duration retention, Instant now) {
    if (errors.isEmpty()) {
      return Map.of();
    }
    List<UUID> uids = new ArrayList<>(errors.keySet());
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_RETRY_MANY)) {
      ps.setArray(1, c.createArrayOf("uuid", uids.toArray(UUID[]::new)));
      ps.setArray(2, c.createArrayOf("text", uids.stream().map(errors::get).toArray()));
      ps.setInt(3, maxRetries);
      ps.setObject(4, JobRows.timestamp(now));
      ps.setLong(5, retention.toSeconds());
      ps.setLong(6, epoch);
      return JobRows.statuses(ps);
    } catch (SQLException e) {
      throw new StoreException("JobRetryMany failed", e);
    }
  }

  /**
   * One failed attempt of a job whose failure the kind calls transient.
   *
   * @param uid the job
   * @param error what went wrong, as shown to callers
   * @param startedAt when the attempt began
   * @param endedAt when it ended
   * @param retryAt when the job is to be tried again, should it have attempts left
   */
  public record FailedAttempt(
      UUID uid, String error, Instant startedAt, Instant endedAt, Instant retryAt) {}

  /**
   * Writes failed attempts (JobFailAttemptMany): each job goes back to pending until {@code
   * retryAt} while it has attempts left under {@code maxAttempts}, or fails.
   *
   * @return the rows written and the status each got
   */
  public Map<UUID, JobStatus> failAttemptMany(
      Collection<FailedAttempt> attempts,
      long epoch,
      int maxAttempts,
      Duration retention,
      Instant now) {
    if (attempts.isEmpty()) {
      return Map.of();
    }
    List<FailedAttempt> all = new ArrayList<>(attempts);
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_FAIL_ATTEMPT_MANY)) {
      ps.setArray(1, c.createArrayOf("uuid", all.stream().map(FailedAttempt::uid).toArray()));
      ps.setArray(2, c.createArrayOf("text", all.stream().map(FailedAttempt::error).toArray()));
      ps.setArray(3, c.createArrayOf("text", texts(all, FailedAttempt::startedAt)));
      ps.setArray(4, c.createArrayOf("text", texts(all, FailedAttempt::endedAt)));
      ps.setArray(5, c.createArrayOf("text", texts(all, FailedAttempt::retryAt)));
      ps.setArray(
          6,
          c.createArrayOf(
              "bigint",
              all.stream()
                  .map(a -> Math.max(0, Duration.between(a.startedAt(), a.endedAt()).toMillis()))
                  .toArray()));
      ps.setInt(7, maxAttempts);
      ps.setObject(8, JobRows.timestamp(now));
      ps.setLong(9, retention.toSeconds());
      ps.setLong(10, epoch);
      return JobRows.statuses(ps);
    } catch (SQLException e) {
      throw new StoreException("JobFailAttemptMany failed", e);
    }
  }

  private static Object[] texts(
      List<FailedAttempt> attempts, java.util.function.Function<FailedAttempt, Instant> field) {
    return attempts.stream().map(field).map(t -> t == null ? null : t.toString()).toArray();
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
      ps.setObject(1, JobRows.timestamp(now));
      ps.setArray(2, c.createArrayOf("uuid", uids));
      ps.setArray(3, c.createArrayOf("float8", fractions));
      ps.setArray(4, c.createArrayOf("bigint", items));
      ps.setLong(5, epoch);
      return ps.executeUpdate();
    } catch (SQLException e) {
      throw new StoreException("JobProgressMany failed", e);
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

  /** Which of these running jobs a caller asked to stop. */
  public Set<UUID> cancelRequestedMany(Collection<UUID> running) {
    if (running.isEmpty()) {
      return Set.of();
    }
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_GET_CANCEL_REQUESTED_MANY)) {
      ps.setArray(1, c.createArrayOf("uuid", running.toArray(UUID[]::new)));
      return JobRows.uids(ps);
    } catch (SQLException e) {
      throw new StoreException("JobGetCancelRequestedMany failed", e);
    }
  }

  /**
   * Puts jobs this owner stopped without an outcome back to pending (or fails those whose cancel
   * was requested).
   *
   * @return the rows written and the status each got
   */
  public Map<UUID, JobStatus> releaseMany(
      Collection<UUID> uids, long epoch, Duration retention, Instant now) {
    if (uids.isEmpty()) {
      return Map.of();
    }
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_RELEASE_MANY)) {
      ps.setObject(1, JobRows.timestamp(now));
      ps.setLong(2, retention.toSeconds());
      ps.setArray(3, c.createArrayOf("uuid", uids.toArray(UUID[]::new)));
      ps.setLong(4, epoch);
      return JobRows.statuses(ps);
    } catch (SQLException e) {
      throw new StoreException("JobReleaseMany failed", e);
    }
  }
}
