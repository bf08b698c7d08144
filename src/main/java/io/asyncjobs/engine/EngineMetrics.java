package io.asyncjobs.engine;

import io.asyncjobs.queue.Completion;
import io.asyncjobs.queue.Job;
import java.time.Duration;
import java.time.Instant;

/**
 * What the engine reports to its meters. The engine itself knows nothing of Micrometer: the
 * application's meters implement it, and {@link #NONE} counts nothing. Every method is called by
 * the owner under the service's run lock and must return quickly and never throw.
 */
public interface EngineMetrics {

  /** Counts nothing. */
  EngineMetrics NONE = new EngineMetrics() {};

  /**
   * A pending job was claimed and is starting now.
   *
   * @param kind the job's kind
   * @param job the claimed row, with its creation time
   * @param startedAt when processing starts
   */
  default void claimed(String kind, Job job, Instant startedAt) {}

  /**
   * A job's outcome was written to its row (fenced outcomes are not reported).
   *
   * @param kind the job's kind
   * @param completion the outcome, with its processing time and stats
   */
  default void completed(String kind, Completion completion) {}

  /**
   * One run of a service finished (a tick or a wake-up): its recoveries, sweeps, cleanup errors and
   * timeouts.
   *
   * @param kind the service's kind
   * @param result what the run did
   */
  default void ran(String kind, TickResult result) {}

  /**
   * How long one scheduled {@link JobService#runOnce()} took.
   *
   * @param kind the service's kind
   * @param elapsed wall time of the run
   */
  default void tickTook(String kind, Duration elapsed) {}

  /**
   * How far behind retention is after a sweep: how long past its expiry the oldest expired job
   * still waits to be swept, zero once the sweep has caught up.
   *
   * @param kind the service's kind
   * @param lag the oldest expired job's wait
   */
  default void retentionLag(String kind, Duration lag) {}
}
