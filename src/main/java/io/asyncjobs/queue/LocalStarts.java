package io.asyncjobs.queue;

/**
 * Whether a single enqueue made on this replica may start its job in its own commit: this replica
 * owns the job's shard, may claim for it, and has a thread free. The engine answers it, as it
 * answers {@link LocalWakeUps}; the queue knows nothing of locks or runners.
 *
 * <p>A reservation holds the shard's run, so that no claim, recovery or handover of the shard runs
 * between the insert and the task's start. The insert that follows starts the job (its row is
 * written {@code running} under the reservation's epoch, fenced as a claim is) only when no due job
 * of the shard waits before it; otherwise it is written {@code pending} as usual. Once the insert
 * has committed {@code running}, {@link Reservation#started} hands the job to a thread; a row that
 * committed running without it (the commit's answer was lost) is this owner's orphan, which its
 * next tick puts back to pending.
 */
public interface LocalStarts {

  /** No shard is owned here: every enqueue writes a pending row. */
  LocalStarts NONE = (kind, shard) -> null;

  /**
   * A free thread of this replica's runner of {@code kind}'s {@code shard}, held for one job about
   * to be inserted, or null when the job is to wait as pending (the shard is owned elsewhere, its
   * threads are busy, the kind is paused, claims go in turns or under a running quota, or the run
   * is busy). Never blocks and never throws. The caller closes it on the same thread.
   */
  Reservation reserve(String kind, String shard);

  /** A thread held for one job until {@link #close}. */
  interface Reservation extends AutoCloseable {

    /** The epoch the row is written under; the insert is fenced by it. */
    long epoch();

    /**
     * The insert found a newer epoch recorded: another replica took the shard, and the job was
     * written pending for it. Ends this replica's holding at once, as a fenced claim does.
     */
    void fenced();

    /** The job's row committed {@code running} under {@link #epoch()}: its task starts now. */
    void started(Job job);

    /** Lets the shard's run go on; without {@link #started}, no thread was taken. */
    @Override
    void close();
  }
}
