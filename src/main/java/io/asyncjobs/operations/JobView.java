package io.asyncjobs.operations;

import io.asyncjobs.auth.DownloadLinks;
import io.asyncjobs.engine.JobService;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobStatus;
import io.quarkus.runtime.annotations.RegisterForReflection;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * What a caller sees of a job: its state, progress, timing and links. The artifact's place on the
 * volume is never shown; a finished job with a file has a signed {@code download_url} instead.
 */
@Schema(name = "Job", description = "The status view of one job")
@RegisterForReflection(registerFullHierarchy = true)
public record JobView(
    UUID uid,
    String kind,
    @Schema(enumeration = {"pending", "running", "done", "failed"}) String status,
    @Schema(description = "True once a caller asked this job to stop") boolean cancelRequested,
    @Schema(nullable = true) Progress progress,
    @Schema(nullable = true) String error,
    @Schema(nullable = true) String preferredName,
    String ownerKind,
    String ownerId,
    @Schema(
            description =
                "Recoveries after the processor running the job vanished (a crash, a lost lock)")
        int retryCount,
    @Schema(
            description =
                "Failed attempts so far, of failures the kind calls transient (max-attempts);"
                    + " 0 until one fails",
            example = "1")
        int attempt,
    @Schema(
            nullable = true,
            description =
                "The last failed attempts, oldest first (at most 20), or null before the first")
        List<Attempt> attempts,
    @Schema(
            nullable = true,
            description =
                "While pending after a failed attempt: when the job is tried again, else null")
        Instant retryAt,
    @Schema(
            description = "Claim priority, -10 to 10, higher first (0 unless asked for at enqueue)",
            example = "0")
        int priority,
    @Schema(
            nullable = true,
            description =
                "The earliest start asked for at enqueue (run_after or delay_seconds), or null")
        Instant runAfter,
    @Schema(
            nullable = true,
            description = "Where the status view is POSTed once the job ends, or null",
            example = "http://builds.ci.svc.cluster.local/hooks/async-jobs")
        String callbackUrl,
    @Schema(
            nullable = true,
            description = "How the callback's delivery went; null without a callback")
        Callback callback,
    Instant createdAt,
    @Schema(nullable = true) Instant startedAt,
    @Schema(nullable = true) Instant completedAt,
    Instant updatedAt,
    @Schema(nullable = true) Instant expiresAt,
    @Schema(nullable = true) Instant lastAccessedAt,
    @Schema(nullable = true) Long durationMs,
    @Schema(nullable = true) Long bytesIn,
    @Schema(nullable = true) Long bytesOut,
    @Schema(nullable = true) Long itemCount,
    @Schema(nullable = true, description = "Kind-specific result fields, once done")
        Map<String, Object> result,
    String statusUrl,
    String eventsUrl,
    @Schema(
            nullable = true,
            description = "A signed link to the artifact, usable without a token until it expires")
        String downloadUrl,
    @Schema(nullable = true) Instant downloadExpiresAt) {

  /**
   * How far a running job has come, as its processor last reported it.
   *
   * @param fraction the part done, 0 to 1, or null when the kind does not know
   * @param items items (files, pages, hits) done so far, or null
   * @param updatedAt when the owner last wrote it
   */
  public record Progress(
      @Schema(nullable = true) Double fraction,
      @Schema(nullable = true) Long items,
      @Schema(nullable = true) Instant updatedAt) {}

  /**
   * The delivery of a job's callback.
   *
   * @param state {@code waiting} (the job has not ended), {@code due} (a delivery is under way or
   *     scheduled), {@code delivered} or {@code gave_up}
   * @param attempts deliveries tried so far
   * @param lastStatus the HTTP status of the last answer, or null (none, or no answer)
   * @param lastError why the last delivery failed, or null
   * @param lastAttemptAt when the last delivery was tried
   * @param nextAttemptAt when the next is due, while one is
   * @param deliveredAt when a receiver answered 2xx
   * @param gaveUpAt when the service stopped trying (jobs.callbacks.give-up-after)
   */
  @Schema(name = "Callback", description = "How a job's completion callback was delivered")
  public record Callback(
      @Schema(enumeration = {"waiting", "due", "delivered", "gave_up"}) String state,
      @Schema(example = "3") int attempts,
      @Schema(nullable = true, example = "200") Integer lastStatus,
      @Schema(nullable = true, example = "HTTP 503") String lastError,
      @Schema(nullable = true) Instant lastAttemptAt,
      @Schema(nullable = true) Instant nextAttemptAt,
      @Schema(nullable = true) Instant deliveredAt,
      @Schema(nullable = true) Instant gaveUpAt) {

    static Callback of(Job job) {
      if (job.callbackUrl == null) {
        return null;
      }
      Map<String, Object> c = job.callback == null ? Map.of() : job.callback;
      Instant delivered = Attempt.instant(c.get("delivered_at"));
      Instant gaveUp = Attempt.instant(c.get("gave_up_at"));
      String state;
      if (delivered != null) {
        state = "delivered";
      } else if (gaveUp != null) {
        state = "gave_up";
      } else if (job.callbackDue != null) {
        state = "due";
      } else {
        state = "waiting";
      }
      return new Callback(
          state,
          c.get("attempts") instanceof Number n ? n.intValue() : 0,
          c.get("last_status") instanceof Number n ? n.intValue() : null,
          c.get("last_error") instanceof String e ? e : null,
          Attempt.instant(c.get("last_attempt_at")),
          job.callbackDue,
          delivered,
          gaveUp);
    }
  }

  /**
   * One failed attempt of a job.
   *
   * @param attempt its number, from 1
   * @param error what went wrong
   * @param startedAt when it began
   * @param endedAt when it ended
   * @param retryAt when the job was to be tried again after it; null for a last attempt
   */
  @Schema(name = "Attempt", description = "One failed attempt of a job")
  public record Attempt(
      @Schema(example = "1") int attempt,
      @Schema(nullable = true, example = "IOException: Connection reset") String error,
      @Schema(nullable = true) Instant startedAt,
      @Schema(nullable = true) Instant endedAt,
      @Schema(nullable = true) Instant retryAt) {

    static Attempt of(Map<String, Object> stored) {
      return new Attempt(
          stored.get("attempt") instanceof Number n ? n.intValue() : 0,
          stored.get("error") instanceof String e ? e : null,
          instant(stored.get("started_at")),
          instant(stored.get("ended_at")),
          instant(stored.get("retry_at")));
    }

    static Instant instant(Object value) {
      if (!(value instanceof String text)) {
        return null;
      }
      try {
        return Instant.parse(text);
      } catch (java.time.format.DateTimeParseException e) {
        return null;
      }
    }
  }

  /** The view of {@code job}; a signed download link is made when the job is done with a file. */
  public static JobView of(Job job, DownloadLinks links) {
    return build(job, links);
  }

  /**
   * The view of {@code job} without a download link, for the admin CLI: a signed link is a
   * credential, and a terminal's scrollback or a script's log is no place for one.
   */
  public static JobView withoutLink(Job job) {
    return build(job, null);
  }

  private static JobView build(Job job, DownloadLinks links) {
    JobStatus status = job.status;
    DownloadLinks.SignedLink link =
        links != null && status == JobStatus.DONE && artifact(job) != null
            ? links.sign(job.uid)
            : null;
    Progress progress =
        job.progress == null && job.progressItems == null
            ? null
            : new Progress(job.progress, job.progressItems, job.progressAt);
    List<Attempt> attempts =
        job.attempts == null ? null : job.attempts.stream().map(Attempt::of).toList();
    return new JobView(
        job.uid,
        job.kind,
        status.dbValue(),
        job.cancelRequested,
        progress,
        job.error,
        job.preferredName,
        job.ownerKind,
        job.ownerId,
        job.retryCount,
        job.attempt,
        attempts,
        status == JobStatus.PENDING && job.attempt > 0 ? job.delayedUntil : null,
        job.priority,
        job.runAfter,
        job.callbackUrl,
        Callback.of(job),
        job.createdAt,
        job.startedAt,
        job.completedAt,
        job.updatedAt,
        job.expiresAt,
        job.lastAccessedAt,
        job.durationMs,
        job.bytesIn,
        job.bytesOut,
        job.itemCount,
        publicResult(job.result),
        statusUrl(job.uid),
        statusUrl(job.uid) + "/events",
        link == null ? null : link.url(),
        link == null ? null : link.expiresAt());
  }

  /** The path of a job's status view. */
  public static String statusUrl(UUID uid) {
    return "/api/jobs/" + uid;
  }

  /** The artifact's path relative to the data directory, or null when the job made none. */
  public static String artifact(Job job) {
    return job.result != null && job.result.get(JobService.RESULT_FILE) instanceof String file
        ? file
        : null;
  }

  private static Map<String, Object> publicResult(Map<String, Object> result) {
    if (result == null) {
      return null;
    }
    Map<String, Object> shown = new LinkedHashMap<>(result);
    shown.remove(JobService.RESULT_FILE);
    return shown;
  }
}
