package io.asyncjobs.engine;

/** What one {@link BaseService#runOnce()} did; logged only when it did something. */
public interface RunResult {

  /** Whether the run changed nothing. */
  boolean isEmpty();
}
