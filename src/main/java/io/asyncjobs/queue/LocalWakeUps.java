package io.asyncjobs.queue;

/**
 * Whether an enqueue committed on this replica wakes the owner of its shard without a notification
 * through the database: this replica owns the shard and wakes its runner in process once the row
 * commits ({@link JobsEnqueued}). The engine answers it, the same way it implements {@link
 * QueueMetrics}: the queue knows nothing of locks or runners.
 *
 * <p>An enqueue that answers yes skips JobInsertOne's question whether the owner may be idle and
 * sends no NOTIFY. When the lock changes hands between that answer and the commit, the new owner
 * finds the job at its next claim or tick, as it finds any job whose notification was lost.
 */
public interface LocalWakeUps {

  /** No shard is owned here: every enqueue asks the database whether to notify. */
  LocalWakeUps NONE = (kind, shard) -> false;

  /**
   * Whether this replica owns {@code shard} of {@code kind}, may claim for it, and wakes its runner
   * after an enqueue made here. Must return quickly and never throw.
   */
  boolean wakesHere(String kind, String shard);
}
