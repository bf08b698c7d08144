package io.asyncjobs.lock;

import java.time.Duration;
import java.time.Instant;
import org.jboss.logging.Logger;

/**
 * What a lock implementation knows about its current holding: whether it holds, its epoch, since
 * when, and when a renewal was last confirmed. It answers whether the holding may still be trusted,
 * on the process's monotonic clock, and counts the changes.
 */
final class Holding {

  private static final Logger LOG = Logger.getLogger(Holding.class);

  private final String identity;
  private final long renewDeadlineNanos;
  private final LockMetrics metrics;

  private volatile boolean held;
  private volatile long epoch;
  private volatile Instant since;
  private volatile long lastConfirmedNanos;

  Holding(String identity, Duration renewDeadline, LockMetrics metrics) {
    this.identity = identity;
    this.renewDeadlineNanos = renewDeadline.toNanos();
    this.metrics = metrics;
  }

  /** The lock was taken, with this fencing epoch. */
  void begin(long newEpoch, String what) {
    epoch = newEpoch;
    since = Instant.now();
    lastConfirmedNanos = System.nanoTime();
    held = true;
    metrics.ownershipChanged();
    LOG.infof("%s owns the job queue now (%s, epoch %d)", identity, what, newEpoch);
  }

  /** A renewal was confirmed. */
  void confirmed() {
    lastConfirmedNanos = System.nanoTime();
    metrics.renewed();
  }

  /** The holding ended; {@code why} is logged when not null. */
  void end(String why) {
    if (held) {
      held = false;
      since = null;
      metrics.ownershipChanged();
      if (why != null) {
        LOG.warnf("%s lost the owner lock (epoch %d): %s", identity, epoch, why);
      }
    }
  }

  /** Whether the implementation believes it holds the lock. */
  boolean held() {
    return held;
  }

  /** Held, and the last confirmed renewal is younger than the renew deadline. */
  boolean trusted() {
    return held && System.nanoTime() - lastConfirmedNanos < renewDeadlineNanos;
  }

  long epoch() {
    return epoch;
  }

  OwnerStatus status(String mode) {
    boolean owner = trusted();
    return new OwnerStatus(mode, identity, owner, epoch, owner ? since : null);
  }
}
