package io.asyncjobs.queue;

/**
 * What the queue reports to its meters, the same way the engine reports through {@code
 * EngineMetrics}: the queue knows nothing of Micrometer, the application's meters implement this,
 * and {@link #NONE} counts nothing. Calls happen after the statement committed and must return
 * quickly and never throw.
 */
public interface QueueMetrics {

  /** Counts nothing. */
  QueueMetrics NONE = new QueueMetrics() {};

  /** {@code count} jobs of {@code kind} were enqueued (created, not an idempotent repeat). */
  default void enqueued(String kind, int count) {}

  /**
   * One commit added the jobs of {@code callers} single enqueues that arrived together (two or
   * more; a caller alone is not counted here).
   */
  default void sharedCommit(int callers) {}

  /** A failed job of {@code kind} was put back to pending by a caller. */
  default void retried(String kind) {}

  /** {@code count} failed jobs of {@code kind} were put back to pending by one bulk retry. */
  default void retried(String kind, long count) {
    for (long i = 0; i < count; i++) {
      retried(kind);
    }
  }
}
