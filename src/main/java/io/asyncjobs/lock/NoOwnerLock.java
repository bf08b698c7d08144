package io.asyncjobs.lock;

/**
 * The owner lock of a process that must never process jobs ({@code jobs.lock.mode=none}): it never
 * competes, so it touches neither the database nor the Kubernetes API, and never owns.
 */
final class NoOwnerLock implements OwnerLock {

  private final String identity;

  NoOwnerLock(String identity) {
    this.identity = identity;
  }

  @Override
  public boolean isOwner() {
    return false;
  }

  @Override
  public long epoch() {
    return 0;
  }

  @Override
  public String identity() {
    return identity;
  }

  @Override
  public OwnerStatus status() {
    return new OwnerStatus("none", identity, false, 0, null);
  }

  @Override
  public void release() {
    // Nothing was ever taken.
  }
}
