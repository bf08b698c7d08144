package io.asyncjobs.lock;

/**
 * The owner lock of a process that must never process jobs ({@code jobs.lock.mode=none}): it never
 * competes, so it touches neither the database nor the Kubernetes API, and never owns.
 */
final class NoOwnerLock implements OwnerLock {

  private final String name;
  private final String identity;

  NoOwnerLock(String name, String identity) {
    this.name = name;
    this.identity = identity;
  }

  @Override
  public Trust trust() {
    return Trust.NONE;
  }

  @Override
  public long epoch() {
    return 0;
  }

  @Override
  public boolean earlierHoldersSettled() {
    return false;
  }

  @Override
  public void superseded(long epoch) {
    // Never held.
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String identity() {
    return identity;
  }

  @Override
  public OwnerStatus status() {
    // Not competing is what this mode is for, so it does not count against readiness.
    return new OwnerStatus("none", identity, false, 0, null, Trust.NONE, true);
  }

  @Override
  public void release() {
    // Nothing was ever taken.
  }
}
