package io.asyncjobs.lock;

/**
 * The service lock: at most one replica holds it at a time, and only that replica processes jobs.
 * Each holding gets a fencing epoch larger than every earlier holding's.
 */
public interface OwnerLock {

  /** NOTIFY channel on which a releasing owner tells the other replicas to try at once. */
  String RELEASED_CHANNEL = "jobs_owner_released";

  /**
   * Whether this replica holds the lock and may claim and write jobs now. False as soon as the last
   * confirmed renewal is older than the renew deadline, whatever the lock's implementation
   * believes.
   */
  boolean isOwner();

  /**
   * The fencing epoch of the current (or, once lost, the last) holding; stamped on every claimed
   * row and checked on every later write. Zero before the first holding.
   */
  long epoch();

  /** This replica's name in logs, health output and the Lease. */
  String identity();

  /** What health output shows about the lock. */
  OwnerStatus status();

  /**
   * Gives the lock up now, so that another replica can take it without waiting for it to expire.
   * Called on shutdown after running jobs were handed back.
   */
  void release();

  /** Tries to take (or confirms) the lock soon, instead of at the next retry; a hint. */
  default void attemptSoon() {}
}
