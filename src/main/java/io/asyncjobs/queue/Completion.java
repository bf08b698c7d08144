package io.asyncjobs.queue;

import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/**
 * The outcome of one finished task, as the reap step writes it.
 *
 * @param uid the job
 * @param status {@link JobStatus#DONE} or {@link JobStatus#FAILED}, or {@link JobStatus#PENDING}
 *     for a task that failed because the database went away: the job is to be tried again
 * @param result what {@code process} returned, or null when it failed
 * @param error exception type and message when it failed, else null
 * @param startedAt when processing started
 * @param completedAt when processing ended
 * @param lastProgress progress reported after the last progress write, or null; written with the
 *     outcome so a finished job never shows a stale report
 * @param transientFailure a failure the kind calls transient: the job is tried again after a
 *     backoff while it has attempts left under {@code max-attempts}
 */
public record Completion(
    UUID uid,
    JobStatus status,
    Map<String, Object> result,
    String error,
    Instant startedAt,
    Instant completedAt,
    JobOutcomes.ProgressReport lastProgress,
    boolean transientFailure) {

  /** A successful outcome. */
  public static Completion done(
      UUID uid, Map<String, Object> result, Instant started, Instant end) {
    return new Completion(uid, JobStatus.DONE, result, null, started, end, null, false);
  }

  /** A failed outcome with the reason shown to callers. */
  public static Completion failed(UUID uid, String error, Instant started, Instant end) {
    return new Completion(uid, JobStatus.FAILED, null, error, started, end, null, false);
  }

  /** A failure the kind calls transient: tried again while the job has attempts left. */
  public static Completion failedTransiently(UUID uid, String error, Instant started, Instant end) {
    return new Completion(uid, JobStatus.FAILED, null, error, started, end, null, true);
  }

  /** A task that failed because the database went away; {@code error} says how. */
  public static Completion retry(UUID uid, String error, Instant started, Instant end) {
    return new Completion(uid, JobStatus.PENDING, null, error, started, end, null, false);
  }

  /** Whether the job is to be tried again rather than finished. */
  public boolean isRetry() {
    return status == JobStatus.PENDING;
  }

  /** This outcome with the progress reported since the last progress write. */
  public Completion withProgress(JobOutcomes.ProgressReport report) {
    return new Completion(
        uid, status, result, error, startedAt, completedAt, report, transientFailure);
  }

  /** Processing time in milliseconds, never negative. */
  public long durationMs() {
    return Math.max(0, completedAt.toEpochMilli() - startedAt.toEpochMilli());
  }

  /** A stat column's value from the result map: a whole number, or null when absent. */
  public Long stat(String name) {
    if (result == null || !(result.get(name) instanceof Number n)) {
      return null;
    }
    return n.longValue();
  }
}
