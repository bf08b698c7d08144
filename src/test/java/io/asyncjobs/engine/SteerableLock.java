package io.asyncjobs.engine;

import io.asyncjobs.lock.OwnerLock;
import io.asyncjobs.lock.OwnerStatus;
import io.asyncjobs.lock.Trust;

/**
 * The application's owner lock, with its trust and its view of earlier holders overridden by the
 * test: a late confirmation or a lost lock without waiting for one. Epoch, name and identity stay
 * the real lock's, so the database fence still applies.
 */
final class SteerableLock implements OwnerLock {

  private final OwnerLock real;
  volatile Trust trust;
  volatile Boolean settled;

  SteerableLock(OwnerLock real) {
    this.real = real;
  }

  @Override
  public Trust trust() {
    Trust t = trust;
    return t == null ? real.trust() : t;
  }

  @Override
  public long epoch() {
    return real.epoch();
  }

  @Override
  public boolean earlierHoldersSettled() {
    Boolean s = settled;
    return s == null ? real.earlierHoldersSettled() : s;
  }

  @Override
  public void superseded(long epoch) {
    real.superseded(epoch);
  }

  @Override
  public String name() {
    return real.name();
  }

  @Override
  public String identity() {
    return real.identity();
  }

  @Override
  public OwnerStatus status() {
    return real.status();
  }

  @Override
  public void release() {
    real.release();
  }
}
