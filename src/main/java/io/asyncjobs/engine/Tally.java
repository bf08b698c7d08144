package io.asyncjobs.engine;

/** Counts what one run of a service did, step by step; becomes its {@link TickResult}. */
final class Tally {
  int done;
  int failed;
  int timedOut;
  int fenced;
  int requeued;
  int abandoned;
  int claimed;
  int swept;
  int cleanupErrors;
  int retried;
  int released;
  int adopted;
  int rescheduled;

  /** Adds what another run did. */
  void add(TickResult r) {
    done += r.done();
    failed += r.failed();
    timedOut += r.timedOut();
    fenced += r.fenced();
    requeued += r.requeued();
    abandoned += r.abandoned();
    claimed += r.claimed();
    swept += r.swept();
    cleanupErrors += r.cleanupErrors();
    retried += r.retried();
    released += r.released();
    adopted += r.adopted();
    rescheduled += r.rescheduled();
  }

  TickResult result() {
    return new TickResult(
        done,
        failed,
        timedOut,
        fenced,
        requeued,
        abandoned,
        claimed,
        swept,
        cleanupErrors,
        retried,
        released,
        adopted,
        rescheduled);
  }
}
