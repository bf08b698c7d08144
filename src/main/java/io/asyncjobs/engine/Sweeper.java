package io.asyncjobs.engine;

import io.asyncjobs.queue.Job;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.jboss.logging.Logger;

/**
 * The fourth step, retention: expired finished jobs of one kind go through the kind's cleanup and
 * are deleted, batch after batch within a time budget per tick. A job whose cleanup threw is kept,
 * its expiry moved by {@code jobs.cleanup-retry-delay}, so that a later sweep tries again.
 */
final class Sweeper {

  private static final Logger LOG = Logger.getLogger(Sweeper.class);

  /** The kind's cleanup hook. */
  interface Cleanup {
    void cleanup(Job job) throws Exception;
  }

  private final String kind;
  private final EngineContext context;
  private final Cleanup cleanup;

  /** When the per-minute counts were last purged; touched only under the run lock. */
  private Instant minutesPurgedAt;

  Sweeper(String kind, EngineContext context, Cleanup cleanup) {
    this.kind = kind;
    this.context = context;
    this.cleanup = cleanup;
  }

  /**
   * Sweeps batch after batch while expired jobs remain, until {@code budget} has passed or {@code
   * claimsWaiting} says a claim is due; reports how far behind retention is.
   *
   * @return whether expired jobs remain
   */
  boolean sweep(Instant now, Tally tally, Duration budget, BooleanSupplier claimsWaiting) {
    purgeMinutes(now);
    long deadline = System.nanoTime() + budget.toNanos();
    int batchSize = context.sweepBatchSize();
    while (true) {
      List<Job> expired = sweepBatch(now, tally);
      if (expired.size() < batchSize) {
        context.metrics().retentionLag(kind, Duration.ZERO);
        return false;
      }
      if (System.nanoTime() - deadline >= 0 || claimsWaiting.getAsBoolean()) {
        // The batch went oldest expiry first: its last job has waited about as long as the oldest
        // one left.
        Instant expiredAt = expired.get(expired.size() - 1).expiresAt;
        context
            .metrics()
            .retentionLag(
                kind,
                expiredAt == null || expiredAt.isAfter(now)
                    ? Duration.ZERO
                    : Duration.between(expiredAt, now));
        return true;
      }
    }
  }

  /**
   * Sweeps one batch.
   *
   * @return the expired jobs the batch found
   */
  List<Job> sweepBatch(Instant now, Tally tally) {
    List<Job> expired = context.store().expiredMany(kind, now, context.sweepBatchSize());
    if (expired.isEmpty()) {
      return expired;
    }
    List<UUID> cleaned = new ArrayList<>();
    List<UUID> kept = new ArrayList<>();
    for (Job job : expired) {
      try {
        cleanup.cleanup(job);
        cleaned.add(job.uid);
      } catch (Exception e) {
        kept.add(job.uid);
        LOG.warnf(
            "%s: cleanup of expired job %s failed, keeping it for %s: %s",
            kind, job.uid, context.cleanupRetryDelay(), JobService.describe(e));
      }
    }
    tally.swept += context.store().deleteMany(cleaned);
    tally.cleanupErrors += kept.size();
    context.store().deferExpiryMany(kept, now.plus(context.cleanupRetryDelay()));
    return expired;
  }

  /** Sweeps batch after batch until none is left (each batch deletes its rows or defers them). */
  void sweepAll(Instant now, Tally tally) {
    while (sweepBatch(now, tally).size() == context.sweepBatchSize()) {
      // A failed cleanup is deferred by jobs.cleanup-retry-delay (at least a second), so this ends.
    }
  }

  /**
   * Once a minute, forgets the per-minute counts of finished jobs older than the two hours the
   * service cards and the admin page read.
   */
  private void purgeMinutes(Instant now) {
    if (minutesPurgedAt != null && now.isBefore(minutesPurgedAt.plus(Duration.ofMinutes(1)))) {
      return;
    }
    context.store().purgeFinishedMinutes(kind, now.minus(Duration.ofHours(2)));
    minutesPurgedAt = now;
  }
}
