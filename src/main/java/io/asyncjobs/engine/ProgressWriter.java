package io.asyncjobs.engine;

import io.asyncjobs.queue.JobOutcomes;
import io.asyncjobs.queue.StoreException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jboss.logging.Logger;

/**
 * The progress step of a run: writes the progress the shard's running tasks reported since the last
 * write, for each job at most once per {@link #PROGRESS_INTERVAL}, under the epoch each row
 * carries. A write that fails is left; the task's next report is written by a later run.
 */
final class ProgressWriter {

  private static final Logger LOG = Logger.getLogger(ProgressWriter.class);

  /** Shortest interval between two progress writes of one job. */
  private static final Duration PROGRESS_INTERVAL = Duration.ofSeconds(1);

  private final EngineContext context;
  private final ShardState state;

  ProgressWriter(EngineContext context, ShardState state) {
    this.context = context;
    this.state = state;
  }

  /**
   * Writes the reports due, one statement per epoch.
   *
   * @return how many reports were taken to be written
   */
  int runOnce(Instant now) {
    Map<Long, List<JobOutcomes.ProgressReport>> byEpoch = new HashMap<>();
    int reports = 0;
    for (Task task : state.inFlight.values()) {
      if (!task.working()
          || (task.progressWrittenAt != null
              && Duration.between(task.progressWrittenAt, now).compareTo(PROGRESS_INTERVAL) < 0)) {
        continue;
      }
      JobOutcomes.ProgressReport report = task.progress.getAndSet(null);
      if (report != null) {
        byEpoch.computeIfAbsent(task.epoch(), e -> new ArrayList<>()).add(report);
        task.progressWrittenAt = now;
        reports++;
      }
    }
    for (Map.Entry<Long, List<JobOutcomes.ProgressReport>> group : byEpoch.entrySet()) {
      try {
        context.jobOutcomes().progressMany(group.getValue(), group.getKey(), now);
      } catch (StoreException e) {
        LOG.debugf("%s: a progress write failed: %s", state.label(), e.getMessage());
      }
    }
    return reports;
  }
}
