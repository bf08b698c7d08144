package io.asyncjobs.engine;

/**
 * A point half-way through an attempt where a test may run something, for example a second attempt
 * of the same job, to show that two attempts never touch each other's files. In production it is
 * {@link #NONE}.
 */
@FunctionalInterface
public interface Checkpoint {

  /** The checkpoint that does nothing. */
  Checkpoint NONE = () -> {};

  /** Runs when the attempt reaches the point; may block. */
  void reached() throws InterruptedException;

  /** {@code checkpoint}, or {@link #NONE} for null. */
  static Checkpoint orNone(Checkpoint checkpoint) {
    return checkpoint == null ? NONE : checkpoint;
  }
}
