package io.asyncjobs.engine;

import io.asyncjobs.queue.Completion;
import io.asyncjobs.queue.DatabaseErrors;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobStore;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One job this process is working on, from its claim until its outcome is committed. The outcome is
 * what {@code process} returned or threw, or what the owner decided when it stopped the task (timed
 * out, cancelled). A task whose work was given up because the lock was lost is <em>abandoned</em>:
 * once its thread has returned, its row goes back to pending instead.
 */
final class Task {

  final Job job;
  final Instant startedAt;

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
  final AtomicReference<JobStore.ProgressReport> progress = new AtomicReference<>();

  /** When progress was last written; touched only under the service's run lock. */
  Instant progressWrittenAt;

  private Map<String, Object> result;
  private Throwable failure;
  private Instant finishedAt;

  /** Set last, after the outcome fields: reading it true makes them visible. */
  private volatile boolean returned;

  final CountDownLatch returnedLatch = new CountDownLatch(1);

  /** The outcome the owner gave a task it stopped; written even while its thread still runs. */
  private volatile Completion stoppedWith;

  private volatile boolean abandoned;

  /** The outcome once computed; computing it takes the last progress report. */
  private Completion computed;

  Task(Job job, Instant startedAt, long epoch) {
    this.job = job;
    this.startedAt = startedAt;
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

  /** Called on the task's thread when {@code process} returned or threw. */
  void finish(Map<String, Object> processResult, Throwable processFailure, Instant end) {
    result = processResult;
    failure = processFailure;
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
        Completion.failed(job.uid, error, startedAt, now).withProgress(progress.getAndSet(null));
    interrupt();
  }

  /** The lock was lost: the thread is interrupted and the job is to go back to pending. */
  void abandon() {
    abandoned = true;
    interrupt();
  }

  boolean abandoned() {
    return abandoned;
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
      return Completion.retry(job.uid, JobService.describe(failure), startedAt, finishedAt);
    }
    Completion completion =
        failure != null
            ? Completion.failed(job.uid, JobService.describe(failure), startedAt, finishedAt)
            : Completion.done(job.uid, result, startedAt, finishedAt);
    return completion.withProgress(progress.getAndSet(null));
  }

  /** Abandoned and returned without an outcome: ready to go back to pending. */
  boolean readyToRelease() {
    return abandoned && returned && stoppedWith == null && outcome() == null;
  }
}
