package io.asyncjobs.engine;

import io.asyncjobs.queue.JobStatus;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/**
 * The outcome of one finished task, as the reap step writes it.
 *
 * @param uid the job
 * @param status {@link JobStatus#DONE} or {@link JobStatus#FAILED}
 * @param result what {@code process} returned, or null when it failed
 * @param error exception type and message when it failed, else null
 * @param startedAt when processing started
 * @param completedAt when processing ended
 */
public record Completion(
    UUID uid,
    JobStatus status,
    Map<String, Object> result,
    String error,
    Instant startedAt,
    Instant completedAt) {

  /** A successful outcome. */
  public static Completion done(
      UUID uid, Map<String, Object> result, Instant started, Instant end) {
    return new Completion(uid, JobStatus.DONE, result, null, started, end);
  }

  /** A failed outcome with the reason shown to callers. */
  public static Completion failed(UUID uid, String error, Instant started, Instant end) {
    return new Completion(uid, JobStatus.FAILED, null, error, started, end);
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
