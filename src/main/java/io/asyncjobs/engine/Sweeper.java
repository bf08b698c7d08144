package io.asyncjobs.engine;

import io.asyncjobs.queue.Job;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.jboss.logging.Logger;

/**
 * The fourth step, retention: expired finished jobs of one kind go through the kind's cleanup and
 * are deleted, a bounded batch at a time. A job whose cleanup threw is kept, its expiry moved by
 * {@code jobs.cleanup-retry-delay}, so that a later sweep tries again.
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

  Sweeper(String kind, EngineContext context, Cleanup cleanup) {
    this.kind = kind;
    this.context = context;
    this.cleanup = cleanup;
  }

  /**
   * Sweeps one batch.
   *
   * @return how many expired jobs the batch found
   */
  int sweepBatch(Instant now, Tally tally) {
    List<Job> expired = context.store().expiredMany(kind, now, context.sweepBatchSize());
    if (expired.isEmpty()) {
      return 0;
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
    return expired.size();
  }

  /** Sweeps batch after batch until none is left (each batch deletes its rows or defers them). */
  void sweepAll(Instant now, Tally tally) {
    while (sweepBatch(now, tally) == context.sweepBatchSize()) {
      // A failed cleanup is deferred by jobs.cleanup-retry-delay (at least a second), so this ends.
    }
  }
}
