package io.asyncjobs.engine;

/**
 * Bounds how many of one shard's tasks have begun {@code process} while their outcome is not yet
 * committed. Without claims ahead a task holds its thread's slot until its outcome is written, so
 * this never exceeds {@code max-concurrent}. With claims ahead a thread takes the next job claimed
 * ahead as soon as {@code process} returns, while the outcome waits for the next statement; a
 * database that is slow to commit would then let the threads work through every job claimed ahead
 * with none of their outcomes written. A gate whose limit is below what claims ahead hold stops
 * that: a thread waits before it begins a job while the limit is reached, and each committed (or
 * otherwise settled) outcome lets one in. At the default limit, as many as a claim can hold ahead,
 * it never binds.
 *
 * <p>So whatever an owner's sudden death leaves behind, it is at most the limit's worth of jobs
 * that began here and whose outcome the next owner does not see: those run again.
 */
final class StartGate {

  /** Tasks entered and not yet left: begun, outcome not yet settled. */
  private int begun;

  private int limit;

  /** Threads waiting to enter; for tests. */
  private int waiting;

  StartGate(int limit) {
    this.limit = limit;
  }

  /** Sets the limit; a higher one lets waiting threads in at once. */
  synchronized void limit(int newLimit) {
    if (newLimit != limit) {
      limit = newLimit;
      notifyAll();
    }
  }

  /**
   * Waits until fewer than the limit have begun, then counts the caller in.
   *
   * @throws InterruptedException when the task was stopped or abandoned while it waited (its thread
   *     is interrupted), or the pool shuts down; the caller is not counted in
   */
  synchronized void enter() throws InterruptedException {
    while (begun >= limit) {
      waiting++;
      try {
        wait();
      } finally {
        waiting--;
      }
    }
    begun++;
  }

  /** One task that entered has settled (or never began after all): lets one waiting thread in. */
  synchronized void leave() {
    begun--;
    notifyAll(); // not notify(): a waiter interrupted as it is woken would swallow the one wake
  }

  /** Threads waiting to enter now. */
  synchronized int waiting() {
    return waiting;
  }

  /** Tasks entered and not yet left. */
  synchronized int begun() {
    return begun;
  }
}
