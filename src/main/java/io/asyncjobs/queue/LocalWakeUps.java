package io.asyncjobs.queue;

/**
 * Whether an enqueue committed on this replica wakes the owner of its shard without a notification
 * through the database: this replica owns the shard and wakes its runner in process once the row
 * commits ({@link JobsEnqueued}). The engine answers it, the same way it implements {@link
 * QueueMetrics}: the queue knows nothing of locks or runners.
 *
 * <p>A single enqueue that answers yes skips JobInsertOne's question whether the owner may be idle
 * and sends no NOTIFY. It asks again once the row committed, and notifies after all when the answer
 * turned to no (the lock left this replica meanwhile). Enqueues that share a commit, and those with
 * an idempotency key, still ask the database.
 *
 * <p>The in-process wake-up observes {@link JobsEnqueued} after the transaction's success. Every
 * enqueue here runs outside a JTA transaction, on a connection that commits on its own, so the
 * wake-up runs once the row is visible; an enqueue inside a JTA transaction would need the
 * notification instead.
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
