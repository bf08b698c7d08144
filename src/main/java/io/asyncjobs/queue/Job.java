package io.asyncjobs.queue;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Convert;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.hibernate.annotations.JdbcTypeCode;
import org.hibernate.type.SqlTypes;

/** One row of the {@code jobs} table, with its payload and result decoded from JSON. */
@Entity
@Table(name = "jobs")
public class Job extends PanacheEntityBase {

  /** UUIDv7 id; sorts in creation order. */
  @Id public UUID uid;

  /** Which service processes the job. */
  @Column(nullable = false, updatable = false)
  public String kind;

  /** Where the job is in its life. */
  @Convert(converter = JobStatusConverter.class)
  @Column(nullable = false)
  public JobStatus status;

  /** Principal kind of the owner; attribution only. */
  @Column(name = "owner_kind", updatable = false)
  public String ownerKind;

  /** Principal id of the owner; attribution only. */
  @Column(name = "owner_id", updatable = false)
  public String ownerId;

  /** File name the caller asked for. */
  @Column(name = "preferred_name", updatable = false)
  public String preferredName;

  /** Kind-specific input. */
  @JdbcTypeCode(SqlTypes.JSON)
  @Column(nullable = false, updatable = false)
  public Map<String, Object> payload;

  /** Kind-specific output, once finished. */
  @JdbcTypeCode(SqlTypes.JSON)
  public Map<String, Object> result;

  /** Why the job failed. */
  public String error;

  /** Recoveries after a vanished processor. */
  @Column(name = "retry_count", nullable = false)
  public int retryCount;

  /** When the job was enqueued. */
  @Column(name = "created_at", nullable = false, updatable = false)
  public Instant createdAt;

  /** When processing last started. */
  @Column(name = "started_at")
  public Instant startedAt;

  /** When the job became done or failed. */
  @Column(name = "completed_at")
  public Instant completedAt;

  /** When the row last changed state. */
  @Column(name = "updated_at", nullable = false)
  public Instant updatedAt;

  /** Processing time of the final attempt. */
  @Column(name = "duration_ms")
  public Long durationMs;

  /** When the result was last touched. */
  @Column(name = "last_accessed_at")
  public Instant lastAccessedAt;

  /** When a finished job may be swept. */
  @Column(name = "expires_at", nullable = false)
  public Instant expiresAt;

  /** Bytes read. */
  @Column(name = "bytes_in")
  public Long bytesIn;

  /** Bytes written. */
  @Column(name = "bytes_out")
  public Long bytesOut;

  /** Items handled. */
  @Column(name = "item_count")
  public Long itemCount;

  /** Fencing epoch of the owner that claimed the job; null while it was never claimed. */
  public Long epoch;

  /** Fraction done, 0 to 1, as last reported while running; null when never reported. */
  public Double progress;

  /** Items done, as last reported while running. */
  @Column(name = "progress_items")
  public Long progressItems;

  /** When the progress was written. */
  @Column(name = "progress_at")
  public Instant progressAt;

  /** A caller asked this job to stop; the owner interrupts and fails it. */
  @Column(name = "cancel_requested", nullable = false)
  public boolean cancelRequested;

  /** Claim priority, {@value JobPriority#MIN} to {@value JobPriority#MAX}, higher first. */
  @Column(name = "priority", nullable = false, updatable = false)
  public int priority;

  /** The earliest start the caller asked for, or null. */
  @Column(name = "run_after", updatable = false)
  public Instant runAfter;

  /** Failed attempts so far, of failures the kind calls transient (not orphan recoveries). */
  @Column(name = "attempt", insertable = false, updatable = false)
  public int attempt;

  /**
   * The last failed attempts, oldest first (at most {@value JobOutcomes#ATTEMPTS_KEPT}): each with
   * {@code attempt}, {@code error}, {@code started_at}, {@code ended_at} and {@code retry_at} (when
   * it was to be tried again; null for a last attempt). Null before the first.
   */
  @JdbcTypeCode(SqlTypes.JSON)
  @Column(name = "attempts", insertable = false, updatable = false)
  public List<Map<String, Object>> attempts;

  /** Where the status view is POSTed once the job ends, or null. */
  @Column(name = "callback_url", updatable = false)
  public String callbackUrl;

  /**
   * The callback's delivery so far: {@code attempts}, {@code last_status}, {@code last_error},
   * {@code last_attempt_at}, {@code delivered_at}, {@code gave_up_at}; null before the job ends.
   */
  @JdbcTypeCode(SqlTypes.JSON)
  @Column(name = "callback", insertable = false, updatable = false)
  public Map<String, Object> callback;

  /** When the callback is next to be delivered, or null. */
  @Column(name = "callback_due", insertable = false, updatable = false)
  public Instant callbackDue;

  /**
   * While pending and not yet claimable: when the job becomes due (its run_after, or the time a
   * transient failure set for its next attempt); null once due.
   */
  @Column(name = "delayed_until", insertable = false, updatable = false)
  public Instant delayedUntil;

  /** The W3C traceparent of the request that enqueued the job, or null: its processing's parent. */
  @Column(name = "traceparent", updatable = false)
  public String traceparent;

  /** The owner, or null for a job enqueued without one. */
  public Owner owner() {
    return ownerKind == null || ownerId == null ? null : new Owner(ownerKind, ownerId);
  }
}
