package io.asyncjobs.lock;

import io.asyncjobs.channels.ChannelSubscriber;
import io.asyncjobs.channels.Notifier;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.SQLException;
import org.jboss.logging.Logger;

/**
 * The lock's hand-off on shutdown: the owner releases the lock and announces it on {@value
 * OwnerLock#RELEASED_CHANNEL}; every replica that hears it tries for the lock at once instead of at
 * its next retry. Without the announcement (the database unreachable, wake-ups off) the others
 * still take the lock, only later.
 */
@ApplicationScoped
public class HandOff implements ChannelSubscriber {

  private static final Logger LOG = Logger.getLogger(HandOff.class);

  private final OwnerLock lock;
  private final Notifier notifier;

  HandOff(OwnerLock lock, Notifier notifier) {
    this.lock = lock;
    this.notifier = notifier;
  }

  /**
   * Releases the lock and, when this replica was the owner, tells the others to try for it now.
   *
   * @param wasOwner whether this replica held the lock before releasing it
   */
  public void release(boolean wasOwner) {
    lock.release();
    if (!wasOwner) {
      return;
    }
    try {
      notifier.send(OwnerLock.RELEASED_CHANNEL, lock.identity());
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
    lock.attemptSoon();
  }
}
