package io.asyncjobs.lock;

import io.asyncjobs.channels.ChannelSubscriber;
import io.asyncjobs.channels.Notifier;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.SQLException;
import org.jboss.logging.Logger;

/**
 * The locks' hand-off on shutdown (and when a replica gives a shard up): the owner releases the
 * lock and announces it on {@value OwnerLock#RELEASED_CHANNEL}; every replica that hears it tries
 * for its locks at once instead of at its next retry. Without the announcement (the database
 * unreachable, wake-ups off) the others still take the lock, only later.
 */
@ApplicationScoped
public class HandOff implements ChannelSubscriber {

  private static final Logger LOG = Logger.getLogger(HandOff.class);

  private final OwnerLocks locks;
  private final Notifier notifier;

  HandOff(OwnerLocks locks, Notifier notifier) {
    this.locks = locks;
    this.notifier = notifier;
  }

  /**
   * Releases every lock and, when this replica owned one, tells the others to try for them now.
   *
   * @param wasOwner whether this replica held a lock before releasing them
   */
  public void releaseAll(boolean wasOwner) {
    locks.releaseAll();
    if (wasOwner) {
      announce();
    }
  }

  /** Tells the other replicas that a lock was given up, so that they try for it now. */
  public void announce() {
    try {
      notifier.send(OwnerLock.RELEASED_CHANNEL, locks.identity());
    } catch (SQLException e) {
      LOG.warnf("Could not announce the lock release (%s); others take it at their next retry", e);
    }
  }

  @Override
  public String channel() {
    return OwnerLock.RELEASED_CHANNEL;
  }

  @Override
  public void notified(String releasedBy) {
    for (OwnerLock lock : locks.all().values()) {
      lock.attemptSoon();
    }
  }
}
