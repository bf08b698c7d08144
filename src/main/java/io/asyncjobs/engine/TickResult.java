package io.asyncjobs.engine;

/**
 * What one {@link JobService#runOnce()} did, step by step.
 *
 * @param done jobs reaped as done
 * @param failed jobs reaped as failed (including timeouts)
 * @param timedOut of those failed, the ones interrupted for running too long
 * @param fenced outcomes not written because a newer owner holds the job
 * @param requeued orphans put back to pending
 * @param abandoned orphans failed for having used up their retries
 * @param claimed pending jobs claimed and started
 * @param swept expired jobs deleted
 * @param cleanupErrors expired jobs kept because their cleanup threw
 * @param retried jobs put back to pending because their task failed when the database went away
 * @param released jobs put back to pending (or failed, if cancelled) after their work was stopped
 *     for a handover or a lost lock
 * @param adopted running jobs this process kept after it took the lock back at a new epoch
 * @param rescheduled jobs put back to pending after a failure the kind calls transient, to be tried
 *     again after a backoff
 */
public record TickResult(
    int done,
    int failed,
    int timedOut,
    int fenced,
    int requeued,
    int abandoned,
    int claimed,
    int swept,
    int cleanupErrors,
    int retried,
    int released,
    int adopted,
    int rescheduled)
    implements RunResult {

  @Override
  public boolean isEmpty() {
    return done
            + failed
            + fenced
            + requeued
            + abandoned
            + claimed
            + swept
            + cleanupErrors
            + retried
            + released
            + adopted
            + rescheduled
        == 0;
  }

  /** Whether the run did anything out of the ordinary, worth a line at info level. */
  boolean isUnusual() {
    return requeued
            + abandoned
            + fenced
            + cleanupErrors
            + retried
            + released
            + adopted
            + rescheduled
        > 0;
  }
}
