package io.asyncjobs.queue;

import java.util.UUID;

/**
 * An enqueue refused because one of its idempotency keys was used before for a different request
 * (another kind, or a payload not equal as JSON); nothing of it was added.
 */
public final class KeyReusedException extends RuntimeException {

  private final int index;
  private final UUID firstUid;
  private final JobStatus firstStatus;

  KeyReusedException(int index, UUID firstUid, JobStatus firstStatus) {
    super("idempotency key of job " + index + " is held by job " + firstUid);
    this.index = index;
    this.firstUid = firstUid;
    this.firstStatus = firstStatus;
  }

  /** The request's place in the list. */
  public int index() {
    return index;
  }

  /** The job that holds the key. */
  public UUID firstUid() {
    return firstUid;
  }

  /** That job's status. */
  public JobStatus firstStatus() {
    return firstStatus;
  }
}
