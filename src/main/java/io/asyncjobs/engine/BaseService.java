package io.asyncjobs.engine;

import io.asyncjobs.lock.OwnerLock;
import io.asyncjobs.lock.Trust;

/**
 * A background role driven by the tick. Every replica calls {@link #supervise()}; only the holder
 * of the owner lock goes on to {@link #runOnce()}.
 */
public abstract class BaseService {

  private volatile OwnerLock ownerLock;

  /** The name the service is registered, configured and reported under. */
  public abstract String name();

  /** One pass of the service's work. Called only on the owner; must return quickly. */
  public abstract RunResult runOnce();

  /**
   * Runs {@link #runOnce()} when this replica may act as the owner (it owns the lock, or its
   * confirmation is merely late), and otherwise {@link #whenNotOwner()}.
   *
   * @return what the run did, or null when this replica is not the owner
   */
  public RunResult supervise() {
    OwnerLock lock = ownerLock;
    if (lock == null || lock.trust() == Trust.NONE) {
      whenNotOwner();
      return null;
    }
    return runOnce();
  }

  /**
   * Called by {@link #supervise()} on a replica that does not own (or no longer owns), and by the
   * trust watch as soon as the lock can no longer be trusted.
   */
  protected void whenNotOwner() {}

  /** Called once by the {@link ServiceManager} when the service is registered. */
  void attachLock(OwnerLock lock) {
    this.ownerLock = lock;
  }

  /** The owner lock this service checks. */
  protected OwnerLock ownerLock() {
    OwnerLock lock = ownerLock;
    if (lock == null) {
      throw new IllegalStateException(name() + " is not registered with the ServiceManager");
    }
    return lock;
  }

  /** Whether the service runs when configuration does not say; true unless a kind says not. */
  public boolean enabledByDefault() {
    return true;
  }

  /** Called when the application stops; releases threads. */
  void stop() {}
}
