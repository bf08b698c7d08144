package io.asyncjobs.storage;

import java.io.IOException;

/**
 * The data volume has too little room for what a job writes. Its message is in words for the job's
 * caller ({@code not enough space on the data volume: ...}) and is the job's whole error: no class
 * name in front. An I/O error like any other otherwise, so a job with attempts left is tried again
 * after its backoff, when space may have been freed.
 */
public class NoSpaceException extends IOException {

  private static final long serialVersionUID = 1L;

  /** A refusal in words, with the error that showed it (null when measured beforehand). */
  public NoSpaceException(String message, Throwable cause) {
    super(message, cause);
  }
}
