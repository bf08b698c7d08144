package io.asyncjobs.lock;

/**
 * The service lock: at most one replica holds it at a time, and only that replica processes jobs.
 * Each holder gets a fencing epoch that is larger than every earlier holder's.
 */
public interface OwnerLock {

  /** Whether this replica holds the lock and may claim and write jobs now. */
  boolean isOwner();

  /**
   * The fencing epoch of the current holding; stamped on every claimed row and checked on every
   * later write. Only meaningful while {@link #isOwner()}.
   */
  long epoch();

  /** A name for this replica in logs and health output. */
  String identity();
}
