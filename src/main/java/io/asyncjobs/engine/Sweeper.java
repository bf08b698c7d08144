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
   * claimsWaiting} says a claim is due (checked between one job's cleanup and the next); reports
   * how far behind retention is.
   *
   * @return whether expired jobs remain that the caller should sweep again at once: false when none
   *     is left, and false when a whole batch kept its rows because every cleanup failed (those are
   *     deferred; going on at once would only fail again, so the next tick tries)
   */
  boolean sweep(Instant now, Tally tally, Duration budget, BooleanSupplier claimsWaiting) {
    purgeMinutes(now);
    long deadline = System.nanoTime() + budget.toNanos();
    BooleanSupplier stop = () -> System.nanoTime() - deadline >= 0 || claimsWaiting.getAsBoolean();
    while (true) {
      Batch batch = sweepBatch(now, tally, stop);
      if (!batch.more()) {
        context.metrics().retentionLag(kind, Duration.ZERO);
        return false;
      }
      if (batch.deleted() == 0 || stop.getAsBoolean()) {
        // The batch went oldest expiry first, and only expiries up to now: its last job has waited
        // about as long as the oldest one left.
        context.metrics().retentionLag(kind, Duration.between(batch.lastExpiry(), now));
        return batch.deleted() > 0;
      }
    }
  }

  /**
   * What one batch did.
   *
   * @param more whether expired jobs may remain: the batch was full, or it stopped before its end
   * @param deleted rows deleted
   * @param lastExpiry the expiry of the last job it handled; null when it found none
   */
  record Batch(boolean more, int deleted, Instant lastExpiry) {}

  /**
   * Sweeps one batch: cleans up each expired job, then deletes the cleaned ones and defers those
   * whose cleanup failed. Once {@code stop} says so it leaves the rest of the batch (at least one
   * job is always handled), which stays expired for the next sweep.
   */
  Batch sweepBatch(Instant now, Tally tally, BooleanSupplier stop) {
    int batchSize = context.sweepBatchSize();
    List<Job> expired = context.jobSweep().expiredMany(kind, now, batchSize);
    if (expired.isEmpty()) {
      return new Batch(false, 0, null);
    }
    List<UUID> cleaned = new ArrayList<>();
    List<UUID> kept = new ArrayList<>();
    int handled = 0;
    for (Job job : expired) {
      if (handled > 0 && stop.getAsBoolean()) {
        break;
      }
      handled++;
      try {
        cleanup.cleanup(job);
        cleaned.add(job.uid);
      } catch (VirtualMachineError e) {
        throw e;
      } catch (Throwable e) {
        // An Error from a kind's cleanup (a missing class, a deep recursion) keeps the job too.
        kept.add(job.uid);
        LOG.warnf(
            "%s: cleanup of expired job %s failed, keeping it for %s: %s",
            kind, job.uid, context.cleanupRetryDelay(), JobService.describe(e));
      }
    }
    int deleted = context.jobSweep().deleteMany(cleaned);
    tally.swept += deleted;
    tally.cleanupErrors += kept.size();
    context.jobSweep().deferExpiryMany(kept, now.plus(context.cleanupRetryDelay()));
    return new Batch(
        expired.size() == batchSize || handled < expired.size(),
        deleted,
        expired.get(handled - 1).expiresAt);
  }

  /** Sweeps batch after batch until none is left (each batch deletes its rows or defers them). */
  void sweepAll(Instant now, Tally tally) {
    while (sweepBatch(now, tally, () -> false).more()) {
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
    context.jobSweep().purgeFinishedMinutes(kind, now.minus(Duration.ofHours(2)));
    minutesPurgedAt = now;
  }
}
