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
    int cleanupErrors)
    implements RunResult {

  @Override
  public boolean isEmpty() {
    return done + failed + fenced + requeued + abandoned + claimed + swept + cleanupErrors == 0;
  }
}
