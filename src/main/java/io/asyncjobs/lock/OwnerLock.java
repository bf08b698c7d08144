package io.asyncjobs.lock;

/**
 * The service lock: at most one replica holds it at a time, and only that replica processes jobs.
 * Each holding gets a fencing epoch larger than every earlier holding's, recorded in {@code
 * job_owner_epochs} under the lock's {@link #name()}; claims carry it and succeed only while it is
 * the newest.
 */
public interface OwnerLock {

  /** NOTIFY channel on which a releasing owner tells the other replicas to try at once. */
  String RELEASED_CHANNEL = "jobs_owner_released";

  /**
   * How far this replica may act on the job queue now. Judged on this process's monotonic clock
   * from the last confirmed renewal, whatever the lock's library believes.
   */
  Trust trust();

  /**
   * Whether this replica holds the lock and may claim now: {@link #trust()} is {@link Trust#CLAIM}.
   */
  default boolean isOwner() {
    return trust() == Trust.CLAIM;
  }

  /**
   * The fencing epoch of the current (or, once lost, the last) holding; stamped on every claimed
   * row and checked on every later write. Zero before the first holding.
   */
  long epoch();

  /**
   * Whether every earlier holder has certainly stopped working: only then may this owner put their
   * running jobs back to pending. False while this replica does not hold the lock.
   */
  boolean earlierHoldersSettled();

  /**
   * A write under {@code epoch} found a newer epoch recorded: another replica took the lock. Ends
   * the holding at once if {@code epoch} is the current one, instead of at the next renewal.
   */
  void superseded(long epoch);

  /** The lock's name: the Lease's, the advisory lock's, and its row in {@code job_owner_epochs}. */
  String name();

  /** This replica's name in logs, health output and the Lease. */
  String identity();

  /** What health output shows about the lock. */
  OwnerStatus status();

  /**
   * Gives the lock up now, so that another replica can take it without waiting for it to expire.
   * Called on shutdown after running jobs were handed back.
   */
  void release();

  /**
   * The replica that holds the lock as this replica last saw it: its own identity while it owns,
   * the Lease's holder as last read (Kubernetes), or null when free or not known here.
   */
  default String holder() {
    return isOwner() ? identity() : null;
  }

  /** Tries to take (or confirms) the lock soon, instead of at the next retry; a hint. */
  default void attemptSoon() {}

  /**
   * Whether this replica tries to take the lock when it is free (or expired): on unless the balance
   * of shards says this replica owns its share already. A held lock is renewed either way.
   */
  default void compete(boolean wanted) {}

  /**
   * Gives the current holding up so that another replica can take the lock, and goes on as {@link
   * #compete} says (call {@code compete(false)} first, or this replica may take it straight back).
   * For the balance of shards, after the shard's jobs were handed back.
   */
  default void relinquish() {}
}
