package io.asyncjobs.queue;

/** What {@link JobBulk#cancelJob} did. */
public enum CancelOutcome {
  /** The job was pending; it is failed now and will never run. */
  CANCELLED,
  /** The job is running; the owner interrupts and fails it on its next tick. */
  STOP_REQUESTED,
  /** The job had already finished; nothing changed. */
  ALREADY_FINISHED,
  /** There is no such job. */
  NOT_FOUND
}
