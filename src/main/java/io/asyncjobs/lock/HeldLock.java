package io.asyncjobs.lock;

/**
 * What the two competing locks share: a {@link Holding} that answers trust, epoch and takeover
 * questions, and the lock's name and this replica's identity. Each implementation says how it
 * competes and whether it still does.
 */
abstract class HeldLock implements OwnerLock {

  private final String mode;
  final String name;
  final String identity;
  final Holding holding;

  /** Whether attempts may take the lock; see {@link #compete}. */
  volatile boolean wanted = true;

  HeldLock(String mode, String name, String identity, Holding holding) {
    this.mode = mode;
    this.name = name;
    this.identity = identity;
    this.holding = holding;
  }

  @Override
  public void compete(boolean wanted) {
    boolean was = this.wanted;
    this.wanted = wanted;
    if (wanted && !was) {
      attemptSoon(); // a shard the balance now wants is tried at once, not a retry period later
    }
  }

  /** Whether attempts still happen: false once released, or when one has hung far too long. */
  abstract boolean competing();

  @Override
  public Trust trust() {
    return holding.trust();
  }

  @Override
  public long epoch() {
    return holding.epoch();
  }

  @Override
  public boolean earlierHoldersSettled() {
    return holding.earlierHoldersSettled();
  }

  @Override
  public void superseded(long epoch) {
    holding.superseded(epoch);
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
    return holding.status(mode, competing());
  }
}
