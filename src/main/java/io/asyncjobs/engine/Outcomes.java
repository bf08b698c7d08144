package io.asyncjobs.engine;

import io.asyncjobs.config.ServiceSettings;
import io.asyncjobs.queue.Completion;
import io.asyncjobs.queue.JobOutcomes;
import io.asyncjobs.queue.JobStatus;
import io.asyncjobs.queue.JsonCodec;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import org.jboss.logging.Logger;

/**
 * Writes what became of tasks, the one path every step takes: outcomes (done, failed), retries (the
 * database went away under the task) and releases (work given up without an outcome), each under
 * the epoch its row carries. It answers which tasks are settled, that is written or found to belong
 * to someone else; the caller forgets only those, so an outcome whose write failed is tried again
 * on the next run.
 */
final class Outcomes {

  private static final Logger LOG = Logger.getLogger(Outcomes.class);

  private final String kind;
  private final EngineContext context;

  /** Whether the last write failed; touched only under the service's run lock. */
  private boolean failing;

  Outcomes(String kind, EngineContext context) {
    this.kind = kind;
    this.context = context;
  }

  /**
   * Writes every ready task of {@code tasks} (see {@link Task#outcome()} and {@link
   * Task#readyToRelease()}), epoch by epoch.
   *
   * @return the tasks settled; should a write fail (the database went away), its tasks are not
   *     among them and the next run writes them again
   */
  List<Task> write(Collection<Task> tasks, ServiceSettings settings, Instant now, Tally tally) {
    Map<Long, List<Task>> byEpoch = new TreeMap<>();
    for (Task task : tasks) {
      if (task.readyToRelease() || task.outcome() != null) {
        byEpoch.computeIfAbsent(task.epoch(), e -> new ArrayList<>()).add(task);
      }
    }
    List<Task> settled = new ArrayList<>();
    try {
      for (Map.Entry<Long, List<Task>> group : byEpoch.entrySet()) {
        writeEpoch(group.getKey(), group.getValue(), settings, now, tally, settled);
      }
      if (failing) {
        failing = false;
        LOG.infof("%s: outcomes are written again", kind);
      }
    } catch (RuntimeException e) {
      if (!failing) {
        failing = true;
        LOG.warnf(
            "%s: could not write the outcomes of finished jobs (%s); they stay in memory and are"
                + " written on the next run",
            kind, e.getMessage());
      } else {
        LOG.debugf("%s: writing outcomes failed again: %s", kind, e.getMessage());
      }
    }
    return settled;
  }

  private void writeEpoch(
      long epoch,
      List<Task> tasks,
      ServiceSettings settings,
      Instant now,
      Tally tally,
      List<Task> settled) {
    List<Task> completed = new ArrayList<>();
    List<Completion> completions = new ArrayList<>();
    List<Task> retried = new ArrayList<>();
    Map<UUID, String> retries = new LinkedHashMap<>();
    List<Task> released = new ArrayList<>();
    List<Task> attempted = new ArrayList<>();
    List<JobOutcomes.FailedAttempt> attempts = new ArrayList<>();
    for (Task task : tasks) {
      if (task.readyToRelease()) {
        released.add(task);
        continue;
      }
      Completion outcome = storable(task.outcome());
      if (outcome.transientFailure() && settings.maxAttempts() > 1) {
        attempted.add(task);
        attempts.add(
            new JobOutcomes.FailedAttempt(
                outcome.uid(),
                outcome.error(),
                outcome.startedAt(),
                outcome.completedAt(),
                now.plus(
                    settings.retryDelay(
                        task.job.attempt + 1, ThreadLocalRandom.current().nextDouble()))));
      } else if (outcome.isRetry()) {
        retried.add(task);
        retries.put(outcome.uid(), outcome.error());
      } else {
        completed.add(task);
        completions.add(outcome);
      }
    }
    JobOutcomes store = context.jobOutcomes();
    JobTraces traces = context.traces();
    if (!completions.isEmpty()) {
      long start = traces.now();
      Map<UUID, JobStatus> written = store.completeMany(completions, epoch, settings.retention());
      traced(completed, start);
      tally(completions, written, epoch, tally);
      settled.addAll(completed);
    }
    if (!retries.isEmpty()) {
      long start = traces.now();
      Map<UUID, JobStatus> written =
          store.retryMany(retries, epoch, settings.maxRetries(), settings.retention(), now);
      traced(retried, start);
      settled.addAll(retried);
      for (UUID uid : retries.keySet()) {
        JobStatus status = written.get(uid);
        if (status == null) {
          fenced(uid, epoch, tally);
        } else if (status == JobStatus.PENDING) {
          tally.retried++;
          LOG.infof(
              "%s: job %s failed because the database went away (%s); back to pending",
              kind, uid, retries.get(uid));
        } else {
          tally.failed++;
        }
      }
    }
    if (!attempts.isEmpty()) {
      long start = traces.now();
      Map<UUID, JobStatus> written =
          store.failAttemptMany(attempts, epoch, settings.maxAttempts(), settings.retention(), now);
      traced(attempted, start);
      settled.addAll(attempted);
      for (int i = 0; i < attempts.size(); i++) {
        JobOutcomes.FailedAttempt attempt = attempts.get(i);
        JobStatus status = written.get(attempt.uid());
        if (status == null) {
          fenced(attempt.uid(), epoch, tally);
        } else if (status == JobStatus.PENDING) {
          attempted.get(i).rescheduled();
          tally.rescheduled++;
          LOG.infof(
              "%s: job %s failed transiently (%s); tried again from %s",
              kind, attempt.uid(), attempt.error(), attempt.retryAt());
        } else {
          tally.failed++;
          context.metrics().completed(kind, storable(attempted.get(i).outcome()));
        }
      }
    }
    if (!released.isEmpty()) {
      long start = traces.now();
      Map<UUID, JobStatus> written =
          store.releaseMany(
              released.stream().map(t -> t.job.uid).toList(), epoch, settings.retention(), now);
      traced(released, start);
      settled.addAll(released);
      tally.released += written.size();
    }
  }

  /** Records the write that began at {@code start} and ended now as a step of each task's span. */
  private void traced(List<Task> tasks, long start) {
    JobTraces traces = context.traces();
    long end = traces.now();
    for (Task task : tasks) {
      traces.step(task.span, JobTraces.OUTCOME, start, end);
    }
  }

  /**
   * Counts outcomes by what was written; a missing uid was fenced off (its row is no longer running
   * under that epoch).
   */
  void tally(List<Completion> completions, Map<UUID, JobStatus> written, long epoch, Tally tally) {
    for (Completion c : completions) {
      JobStatus status = written.get(c.uid());
      if (status == null) {
        fenced(c.uid(), epoch, tally);
        continue;
      }
      Completion reported = c;
      if (status != c.status()) {
        // The database refused the result; the job failed instead, saying why.
        reported =
            Completion.failed(
                c.uid(), "its result could not be stored", c.startedAt(), c.completedAt());
      }
      if (status == JobStatus.DONE) {
        tally.done++;
      } else {
        tally.failed++;
      }
      context.metrics().completed(kind, reported);
    }
  }

  private void fenced(UUID uid, long epoch, Tally tally) {
    tally.fenced++;
    LOG.warnf(
        "%s: outcome of job %s not written: the job is no longer running under epoch %d"
            + " (another owner took it)",
        kind, uid, epoch);
  }

  /**
   * The outcome as it can be stored: a result that does not encode as JSON fails its job alone,
   * with the reason, instead of failing the whole batch's write.
   */
  static Completion storable(Completion outcome) {
    if (outcome.result() == null) {
      return outcome;
    }
    try {
      JsonCodec.encode(outcome.result());
      return outcome;
    } catch (RuntimeException e) {
      return Completion.failed(
              outcome.uid(),
              "its result could not be stored: " + e.getMessage(),
              outcome.startedAt(),
              outcome.completedAt())
          .withProgress(outcome.lastProgress());
    }
  }
}
