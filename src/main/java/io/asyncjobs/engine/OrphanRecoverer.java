package io.asyncjobs.engine;

import io.asyncjobs.config.ServiceSettings;
import io.asyncjobs.queue.JobRecovery;
import java.time.Instant;
import org.jboss.logging.Logger;

/**
 * The second step of a run, recover orphans: the shard's running rows that no task of this runner
 * holds (left by an earlier owner, once it can no longer write them) go back to pending, or fail
 * once they have used up their retries. A job put back may sort before the wake-up claim cursor, so
 * the next wake-up claims from the head.
 */
final class OrphanRecoverer {

  private static final Logger LOG = Logger.getLogger(OrphanRecoverer.class);

  private final EngineContext context;
  private final ShardState state;

  OrphanRecoverer(EngineContext context, ShardState state) {
    this.context = context;
    this.state = state;
  }

  /**
   * Recovers the shard's orphans in one statement, under {@code epoch}.
   *
   * @return how many orphans were recovered, back to pending or failed
   */
  int runOnce(ServiceSettings settings, long epoch, Instant now, Tally tally) {
    JobRecovery.RescueCounts counts =
        context
            .jobRecovery()
            .rescueMany(
                state.kind,
                state.shard,
                state.inFlight.keySet(),
                epoch,
                state.lock().earlierHoldersSettled(),
                settings.maxRetries(),
                settings.retention(),
                now);
    if (counts.requeued() + counts.failed() > 0) {
      LOG.infof(
          "%s: recovered orphaned jobs: %d back to pending, %d failed after max-retries %d",
          state.label(), counts.requeued(), counts.failed(), settings.maxRetries());
      state.rewind.set(true);
    }
    tally.requeued += counts.requeued();
    tally.abandoned += counts.failed();
    return counts.requeued() + counts.failed();
  }
}
