package io.asyncjobs.queue;

/**
 * Fired by {@link JobQueue} after it added jobs, so that an owner in the same process can start
 * them without waiting for the database's notification.
 *
 * @param kind the kind of the jobs added
 * @param fromHead whether the jobs are older than those the owner claims next (an admin retry), so
 *     that its next claim must start from the head of the queue
 */
public record JobsEnqueued(String kind, boolean fromHead) {

  /** New jobs, which join the queue at its tail. */
  public JobsEnqueued(String kind) {
    this(kind, false);
  }
}
