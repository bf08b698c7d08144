package io.asyncjobs.lock;

/**
 * How far this replica may act on the job queue now, as its owner lock judges it. The engine claims
 * only under {@link #CLAIM}, keeps its running work and writes finished outcomes under {@link
 * #FINISH}, and interrupts its running work under {@link #NONE}.
 */
public enum Trust {

  /** The lock is held and confirmed recently: claim, write, recover, sweep. */
  CLAIM,

  /**
   * A confirmation is late, or the lock's session broke and is being taken back: nobody else can
   * have started this replica's jobs yet, so running work goes on and finished outcomes are
   * written, but nothing new is claimed.
   */
  FINISH,

  /**
   * Not the owner: never held, released, known to be held by another replica, or the last
   * confirmation is older than the renew deadline. Running work is interrupted.
   */
  NONE
}
