package io.asyncjobs.engine;

import io.asyncjobs.queue.Completion;
import io.asyncjobs.queue.DatabaseErrors;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobOutcomes;
import io.opentelemetry.api.trace.Span;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One job this process is working on, from its claim until its outcome is committed. The outcome is
 * what {@code process} returned or threw, or what the owner decided when it stopped the task (timed
 * out, cancelled). A task whose work was given up because the lock was lost is <em>abandoned</em>:
 * once its thread has returned, its row goes back to pending instead.
 */
final class Task {

  /** Claimed, waiting for a worker thread: a claim may run ahead of the free threads. */
  private static final int WAITING = 0;

  /** A worker thread runs {@code process}, or has run it. */
  private static final int BEGUN = 1;

  /** Stopped or abandoned before a thread took it: {@code process} never runs. */
  private static final int NEVER = 2;

  final Job job;

  /** When the claim took the job; the row's start until {@code process} begins. */
  final Instant claimedAt;

  /** The job's processing span ({@link JobTraces}); the invalid span when tracing is off. */
  final Span span;

  /** When {@code process} began, or null while the task waits for a thread. */
  private volatile Instant startedAt;

  private final AtomicInteger state = new AtomicInteger(WAITING);

  /** Whether the task is counted in its shard's {@link StartGate}, until its fate is settled. */
  private final AtomicBoolean gated = new AtomicBoolean();

  /** {@link System#nanoTime()} when {@code process} began, for the kind's typical run time. */
  private long beganNanos;

  /** The epoch the row is stamped with: the claim's, or the one it was adopted under since. */
  private volatile long epoch;

  /**
   * Every epoch the row may carry while this task holds it: the claim's, then each one an adoption
   * stamped or was about to stamp. Replaced whole (never changed in place), before the adoption's
   * statement runs, so a guard that reads it never misses the row's epoch.
   */
  private volatile long[] epochs;

  volatile Future<?> future;

  /** The latest progress reported and not yet written. */
  final AtomicReference<JobOutcomes.ProgressReport> progress = new AtomicReference<>();

  /** When progress was last written; touched only under the service's run lock. */
  Instant progressWrittenAt;

  private Map<String, Object> result;
  private Throwable failure;
  private boolean transientFailure;
  private Instant finishedAt;

  /** Set last, after the outcome fields: reading it true makes them visible. */
  private volatile boolean returned;

  final CountDownLatch returnedLatch = new CountDownLatch(1);

  /** The outcome the owner gave a task it stopped; written even while its thread still runs. */
  private volatile Completion stoppedWith;

  private volatile boolean abandoned;

  /** Set once its failed attempt was written back to pending, to be tried again. */
  private volatile boolean rescheduled;

  /** The outcome once computed; computing it takes the last progress report. */
  private Completion computed;

  Task(Job job, Instant claimedAt, long epoch, Span span) {
    this.job = job;
    this.claimedAt = claimedAt;
    this.span = span;
    this.epoch = epoch;
    this.epochs = new long[] {epoch};
  }

  long epoch() {
    return epoch;
  }

  /**
   * The epochs the row may carry while this task holds it. Only this replica stamps these epochs,
   * and only on rows it holds, so a row still running under one of them is still this task's.
   */
  long[] epochs() {
    return epochs;
  }

  /** An adoption under {@code newEpoch} is about to run; from now on the row may carry it. */
  void adopting(long newEpoch) {
    long[] known = epochs;
    for (long e : known) {
      if (e == newEpoch) {
        return;
      }
    }
    long[] more = Arrays.copyOf(known, known.length + 1);
    more[known.length] = newEpoch;
    epochs = more;
  }

  /** The row now carries {@code newEpoch}. */
  void adoptedUnder(long newEpoch) {
    epoch = newEpoch;
  }

  /**
   * Called on a worker thread before {@code process}: whether it may run. False once the task was
   * stopped or abandoned while it waited, which has then already counted it returned.
   */
  boolean begin(Instant now) {
    if (!state.compareAndSet(WAITING, BEGUN)) {
      return false;
    }
    startedAt = now;
    beganNanos = System.nanoTime();
    return true;
  }

  /** Its thread entered the shard's start gate for it. */
  void entered() {
    gated.set(true);
  }

  /** Whether it was counted in the start gate, which it now leaves; true at most once. */
  boolean leaveGate() {
    return gated.compareAndSet(true, false);
  }

  /** When {@code process} began, or null while the task waits for a thread. */
  Instant startedAt() {
    return startedAt;
  }

  /** The start an outcome records: when {@code process} began, else when the job was claimed. */
  private Instant start() {
    Instant began = startedAt;
    return began != null ? began : claimedAt;
  }

  /** How long {@code process} ran, in nanoseconds; read once the task returned. */
  long ranNanos(long endNanos) {
    return endNanos - beganNanos;
  }

  /**
   * Marks a task that no thread took yet as never to run, and as returned: nothing of it runs, so
   * its slot is free at once (its end is its claim; the outcome written is the stop's, or none). A
   * task a thread already took is left to return by itself.
   */
  private void preventStart() {
    if (state.compareAndSet(WAITING, NEVER)) {
      finish(null, new InterruptedException("stopped before it started"), false, claimedAt);
    }
  }

  /**
   * Called on the task's thread when {@code process} returned or threw.
   *
   * @param transientProcessFailure whether the kind calls the failure transient (worth another
   *     attempt)
   */
  void finish(
      Map<String, Object> processResult,
      Throwable processFailure,
      boolean transientProcessFailure,
      Instant end) {
    result = processResult;
    failure = processFailure;
    transientFailure = transientProcessFailure;
    finishedAt = end;
    returned = true;
    returnedLatch.countDown();
  }

  boolean returned() {
    return returned;
  }

  /** Neither returned nor stopped nor abandoned: its thread works on the job. */
  boolean working() {
    return !returned && stoppedWith == null && !abandoned;
  }

  /** The owner stops the task with this outcome and interrupts its thread. */
  void stop(String error, Instant now) {
    stoppedWith =
        Completion.failed(job.uid, error, start(), now).withProgress(progress.getAndSet(null));
    preventStart();
    interrupt();
  }

  /** The lock was lost: the thread is interrupted and the job is to go back to pending. */
  void abandon() {
    abandoned = true;
    preventStart();
    interrupt();
  }

  boolean abandoned() {
    return abandoned;
  }

  /** Its transient failure was written: the job waits for its next attempt. */
  void rescheduled() {
    rescheduled = true;
  }

  /** Whether its outcome was a failed attempt written back to pending. */
  boolean wasRescheduled() {
    return rescheduled;
  }

  private void interrupt() {
    Future<?> f = future;
    if (f != null) {
      f.cancel(true);
    }
  }

  /**
   * The outcome to write, or null while there is none yet. An abandoned task that returned without
   * a failure did finish its work, so its result stands; one that failed (most likely because it
   * was interrupted) has none and goes back to pending.
   */
  synchronized Completion outcome() {
    Completion stopped = stoppedWith;
    if (stopped != null) {
      return stopped;
    }
    if (!returned || (abandoned && failure != null)) {
      return null;
    }
    if (computed == null) {
      computed = computeOutcome();
    }
    return computed;
  }

  private Completion computeOutcome() {
    if (failure != null && DatabaseErrors.isConnectionLost(failure)) {
      return Completion.retry(job.uid, JobService.describe(failure), start(), finishedAt);
    }
    Completion completion;
    if (failure == null) {
      completion = Completion.done(job.uid, result, start(), finishedAt);
    } else if (transientFailure) {
      completion =
          Completion.failedTransiently(job.uid, JobService.describe(failure), start(), finishedAt);
    } else {
      completion = Completion.failed(job.uid, JobService.describe(failure), start(), finishedAt);
    }
    return completion.withProgress(progress.getAndSet(null));
  }

  /** Abandoned and returned without an outcome: ready to go back to pending. */
  boolean readyToRelease() {
    return abandoned && returned && stoppedWith == null && outcome() == null;
  }
}
