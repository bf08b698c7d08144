package io.asyncjobs.lock;

import java.time.Duration;
import java.time.Instant;
import java.util.function.LongSupplier;
import org.jboss.logging.Logger;

/**
 * What a lock implementation knows about its current holding: whether it holds, its epoch, since
 * when, and when a renewal that was later confirmed was sent. From that it answers how far the
 * holding may be trusted ({@link Trust}), on the process's monotonic clock only: wall clocks of
 * other replicas never enter into it.
 *
 * <pre>
 *   sent ── confirmed ─────────── lateAfter ──────────── renewDeadline ──▶ time since the renewal was sent
 *   |            CLAIM            |        FINISH          |   NONE (interrupt)
 * </pre>
 *
 * A renewal counts from the moment its request was sent, not from when its answer came, so the
 * window can only be shorter than what the lock really grants. A broken session (the connection
 * failed) keeps {@link Trust#FINISH} until the deadline; a lock known to be held by someone else,
 * or released, is {@link Trust#NONE} at once.
 */
final class Holding {

  private static final Logger LOG = Logger.getLogger(Holding.class);

  private final String identity;
  private final long renewDeadlineNanos;
  private final long lateAfterNanos;
  private final LongSupplier nanos;
  private final LockMetrics metrics;

  private volatile boolean held;
  private volatile boolean lost = true;
  private volatile long epoch;
  private volatile Instant since;
  private volatile long lastConfirmedNanos;
  private volatile long takenNanos;
  private volatile long settleNanos;

  Holding(
      String identity,
      Duration renewDeadline,
      Duration retryPeriod,
      LongSupplier nanos,
      LockMetrics metrics) {
    this.identity = identity;
    this.renewDeadlineNanos = renewDeadline.toNanos();
    this.lateAfterNanos = lateAfter(renewDeadline, retryPeriod).toNanos();
    this.nanos = nanos;
    this.metrics = metrics;
  }

  /**
   * When a confirmation counts as late: two retry periods without one (a renewal is tried every
   * period), but never more than half the renew deadline, so that claiming pauses well before work
   * has to be interrupted.
   */
  static Duration lateAfter(Duration renewDeadline, Duration retryPeriod) {
    Duration twoPeriods = retryPeriod.multipliedBy(2);
    Duration half = renewDeadline.dividedBy(2);
    return twoPeriods.compareTo(half) < 0 ? twoPeriods : half;
  }

  /**
   * The lock was taken with this fencing epoch.
   *
   * @param sentNanos when the request that took it was sent
   * @param settle how long after now an earlier holder may still be acting on its own holding
   */
  synchronized void begin(long newEpoch, long sentNanos, String what, Duration settle) {
    epoch = newEpoch;
    since = Instant.now();
    lastConfirmedNanos = sentNanos;
    takenNanos = nanos.getAsLong();
    settleNanos = settle.toNanos();
    held = true;
    lost = false;
    metrics.ownershipChanged();
    LOG.infof("%s owns the job queue now (%s, epoch %d)", identity, what, newEpoch);
  }

  /** A renewal sent at {@code sentNanos} was confirmed. */
  void confirmed(long sentNanos) {
    if (sentNanos - lastConfirmedNanos > 0) {
      lastConfirmedNanos = sentNanos;
    }
    metrics.renewed();
  }

  /**
   * The session that held the lock broke; the implementation tries to take it back. Until the
   * deadline of the last confirmation nobody else can have started this holding's jobs, so the
   * running ones go on.
   */
  synchronized void broken(String why) {
    if (held) {
      held = false;
      metrics.renewalFailed();
      LOG.warnf(
          "%s: the owner lock's session broke (epoch %d): %s; taking it back, claiming nothing"
              + " meanwhile",
          identity, epoch, why);
    }
  }

  /** The lock is known to be lost (another replica holds it, or it was released). */
  synchronized void lost(String why) {
    boolean was = !lost;
    held = false;
    lost = true;
    since = null;
    if (was) {
      metrics.ownershipChanged();
      if (why != null) {
        LOG.warnf("%s lost the owner lock (epoch %d): %s", identity, epoch, why);
      }
    }
  }

  /**
   * A write found that a newer epoch than {@code staleEpoch} was taken: if that is this holding's,
   * it is lost.
   */
  void superseded(long staleEpoch) {
    if (staleEpoch == epoch && !lost) {
      lost("a newer owner took a later epoch than " + staleEpoch);
    }
  }

  /** Whether the implementation believes it holds the lock now. */
  boolean held() {
    return held;
  }

  /** The holding may be trusted no longer (it ended, or its deadline passed). */
  boolean lapsed() {
    return trust() == Trust.NONE;
  }

  Trust trust() {
    if (lost || epoch == 0) {
      return Trust.NONE;
    }
    long age = nanos.getAsLong() - lastConfirmedNanos;
    if (age >= renewDeadlineNanos) {
      return Trust.NONE;
    }
    return held && age < lateAfterNanos ? Trust.CLAIM : Trust.FINISH;
  }

  /** Whether every earlier holder has certainly stopped acting (see {@link #begin}). */
  boolean earlierHoldersSettled() {
    return !lost && nanos.getAsLong() - takenNanos >= settleNanos;
  }

  long epoch() {
    return epoch;
  }

  OwnerStatus status(String mode, boolean competing) {
    Trust trust = trust();
    boolean owner = trust == Trust.CLAIM;
    return new OwnerStatus(
        mode, identity, owner, epoch, trust != Trust.NONE ? since : null, trust, competing);
  }
}
