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
        adopted);
  }
}
