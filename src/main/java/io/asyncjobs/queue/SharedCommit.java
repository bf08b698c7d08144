package io.asyncjobs.queue;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Lets requests that arrive together share one piece of work, such as one commit: a caller that
 * finds fewer than {@code flushes} pieces of work in flight does its own at once (so a caller alone
 * waits for nothing and pays a lock); a caller that finds them all busy waits, and when one of them
 * ends, the first caller waiting takes every caller waiting (up to {@code maxBatch}) into the next
 * piece of work. Each caller returns only once the work that held its request is over, with its own
 * outcome. Nothing here waits on a timer: a batch is only ever what piled up during a flush.
 *
 * <p>Group commit, as PostgreSQL itself does for WAL flushes and as the group-commit designs of
 * databases do; a request never waits behind more than the flush in flight and its own.
 *
 * @param <R> a request
 * @param <T> the outcome of one request
 */
final class SharedCommit<R, T> {

  /** The work done for a batch of requests: one outcome per request, in order. */
  @FunctionalInterface
  interface Work<R, T> {
    /**
     * Does the work for {@code requests} and answers each; a request that failed on its own answers
     * with {@link Outcome#failed}. A throw fails every request of the batch.
     */
    List<Outcome<T>> run(List<R> requests);
  }

  /** The outcome of one request: its value, or the exception its caller gets. */
  record Outcome<T>(T value, RuntimeException error) {

    static <T> Outcome<T> of(T value) {
      return new Outcome<>(value, null);
    }

    static <T> Outcome<T> failed(RuntimeException error) {
      return new Outcome<>(null, error);
    }

    T get() {
      if (error != null) {
        throw error;
      }
      return value;
    }
  }

  private final Work<R, T> work;
  private final int flushes;
  private final int maxBatch;
  private final ReentrantLock lock = new ReentrantLock();
  private final ArrayDeque<Caller<R, T>> waiting = new ArrayDeque<>();
  private int inFlight;

  /**
   * @param work the work of one batch
   * @param flushes how many batches may be in flight at once (at least 1)
   * @param maxBatch the most requests one batch takes (at least 1)
   */
  SharedCommit(Work<R, T> work, int flushes, int maxBatch) {
    if (flushes < 1 || maxBatch < 1) {
      throw new IllegalArgumentException("flushes and maxBatch must be at least 1");
    }
    this.work = work;
    this.flushes = flushes;
    this.maxBatch = maxBatch;
  }

  /**
   * Runs {@code request}, alone or with the requests waiting beside it, and answers its outcome
   * once the work that held it is over.
   *
   * @throws RuntimeException the request's own failure, or the batch's
   */
  T run(R request) {
    Caller<R, T> me = new Caller<>(request);
    List<Caller<R, T>> batch;
    lock.lock();
    try {
      if (inFlight < flushes) {
        inFlight++;
        batch = List.of(me);
      } else {
        // Only a caller that waits needs a condition to wait on; one that runs at once allocates
        // none.
        me.wakeUp = lock.newCondition();
        waiting.addLast(me);
        // Not interruptible: a caller handed a batch must lead it, or the callers behind it would
        // wait for ever; the wait is one flush long.
        while (me.outcome == null && me.batch == null) {
          me.wakeUp.awaitUninterruptibly();
        }
        if (me.outcome != null) {
          return me.outcome.get();
        }
        batch = me.batch;
      }
    } finally {
      lock.unlock();
    }
    // A caller interrupted while it waited leads with its flag cleared, so that the work (a pool
    // that waits for a connection, say) does not fail everyone's batch for it; the flag comes back.
    boolean interrupted = Thread.interrupted();
    try {
      hand(batch, runWork(batch), null);
    } catch (RuntimeException e) {
      hand(batch, null, e);
    } catch (Error e) {
      hand(batch, null, new IllegalStateException(e));
      throw e;
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
    return me.outcome.get();
  }

  /** How many callers wait for a flush to take them. */
  int waiting() {
    lock.lock();
    try {
      return waiting.size();
    } finally {
      lock.unlock();
    }
  }

  /** The work for {@code batch}, checked to answer every request. */
  private List<Outcome<T>> runWork(List<Caller<R, T>> batch) {
    List<R> requests = new ArrayList<>(batch.size());
    for (Caller<R, T> c : batch) {
      requests.add(c.request);
    }
    List<Outcome<T>> outcomes = work.run(requests);
    // Not contains(null): immutable lists throw on it.
    if (outcomes.size() != batch.size() || outcomes.stream().anyMatch(o -> o == null)) {
      // A caller without an outcome would wait for ever: the batch fails instead.
      throw new IllegalStateException(
          "work answered " + outcomes.size() + " of " + batch.size() + " requests, or a null");
    }
    return outcomes;
  }

  /**
   * Gives each caller of {@code batch} its outcome (or {@code failure}), wakes them, and passes the
   * lead to the first caller waiting, or ends this flight.
   */
  private void hand(List<Caller<R, T>> batch, List<Outcome<T>> outcomes, RuntimeException failure) {
    lock.lock();
    try {
      for (int i = 0; i < batch.size(); i++) {
        Caller<R, T> c = batch.get(i);
        c.outcome = outcomes != null ? outcomes.get(i) : Outcome.failed(failure);
        if (c.wakeUp != null) {
          c.wakeUp.signal();
        }
      }
      if (waiting.isEmpty()) {
        inFlight--;
      } else {
        // The flight passes to the next batch, taken out of the queue here, under the lock, so
        // that no other flight ending meanwhile can hand the same callers a second time.
        List<Caller<R, T>> next = takeWaiting();
        Caller<R, T> leader = next.get(0);
        leader.batch = next;
        leader.wakeUp.signal();
      }
    } finally {
      lock.unlock();
    }
  }

  /** Takes up to {@code maxBatch} waiting callers, the leader first; called under the lock. */
  private List<Caller<R, T>> takeWaiting() {
    List<Caller<R, T>> batch = new ArrayList<>(Math.min(waiting.size(), maxBatch));
    while (!waiting.isEmpty() && batch.size() < maxBatch) {
      batch.add(waiting.pollFirst());
    }
    return batch;
  }

  /** One caller: its request, its outcome once known, and the batch it leads, if it leads one. */
  private static final class Caller<R, T> {
    final R request;
    Condition wakeUp;
    Outcome<T> outcome;
    List<Caller<R, T>> batch;

    Caller(R request) {
      this.request = request;
    }
  }
}
