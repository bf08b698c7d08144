package io.asyncjobs.engine;

/**
 * Thrown by a kind's {@code process} to say that the job may well succeed if tried again later: a
 * peer that did not answer, a resource briefly out of reach. With {@code max-attempts} above 1 the
 * job goes back to pending and is tried again after a backoff; otherwise it fails as any failure
 * does. Its message becomes the attempt's error.
 */
public class TransientFailure extends Exception {

  private static final long serialVersionUID = 1L;

  /** A transient failure saying what went wrong. */
  public TransientFailure(String message) {
    super(message);
  }

  /** A transient failure saying what went wrong, and the exception that showed it. */
  public TransientFailure(String message, Throwable cause) {
    super(message, cause);
  }
}
