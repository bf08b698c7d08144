package io.asyncjobs.queue;

/**
 * Fired by {@link JobQueue} after it added jobs, so that an owner in the same process can start
 * them without waiting for the database's notification.
 *
 * @param kind the kind of the jobs added
 * @param shard the shard they were added to, or null when they span several (a batch of a hashed
 *     kind): then every shard of the kind is woken
 * @param fromHead whether the jobs are older than those the owner claims next (an admin retry), so
 *     that its next claim must start from the head of the queue
 */
public record JobsEnqueued(String kind, String shard, boolean fromHead) {}
