package io.asyncjobs.files;

/**
 * A path a caller named is not allowed: outside its scope, absolute, or otherwise unusable. At
 * enqueue it becomes a 400; inside {@code process} it fails the job.
 */
public class PathRefusedException extends IllegalArgumentException {

  /** A refusal whose message the caller sees. */
  public PathRefusedException(String message) {
    super(message);
  }
}
