package io.asyncjobs.queue;

/**
 * Fired by {@link JobQueue} after it added jobs, so that an owner in the same process can start
 * them without waiting for the database's notification.
 *
 * @param kind the kind of the jobs added
 */
public record JobsEnqueued(String kind) {}
