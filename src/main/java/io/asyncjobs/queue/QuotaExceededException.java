package io.asyncjobs.queue;

import java.time.Duration;

/**
 * An enqueue refused because its owner would hold more pending jobs of the kind than the kind's
 * {@code max-pending-per-owner}; nothing of it was added.
 */
public final class QuotaExceededException extends RuntimeException {

  private final String kind;
  private final int limit;
  private final long pending;
  private final Duration retryAfter;

  QuotaExceededException(String kind, int limit, long pending, Duration retryAfter) {
    super(
        "the owner may hold "
            + limit
            + " pending job(s) of kind "
            + kind
            + "; this enqueue would make "
            + pending);
    this.kind = kind;
    this.limit = limit;
    this.pending = pending;
    this.retryAfter = retryAfter;
  }

  /** The kind. */
  public String kind() {
    return kind;
  }

  /** The owner's pending quota of the kind. */
  public int limit() {
    return limit;
  }

  /** How many the owner would have held with the refused jobs. */
  public long pending() {
    return pending;
  }

  /** About when enough of the owner's pending jobs will have started, by the kind's run times. */
  public Duration retryAfter() {
    return retryAfter;
  }
}
