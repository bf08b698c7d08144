package io.asyncjobs.kinds.deepsearch;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * A few threads, kept by the kind and shared by its searches (the workers of a second search at the
 * same time queue behind the first's), that work through a list of documents, each thread with
 * state of its own (a buffer, a prefilter). The attempt's thread waits, reports progress while it
 * waits, and on an interrupt (a cancel, a timeout) stops the workers and throws; a worker's failure
 * stops the others and is rethrown.
 */
final class Parallel implements AutoCloseable {

  /** How often the waiting thread reports progress. */
  private static final long REPORT_MILLIS = 200;

  /** One document's work, given its thread's state and the document's index. */
  @FunctionalInterface
  interface Work<S> {
    void run(S state, int index) throws Exception;
  }

  private final ExecutorService pool;
  private final int threads;

  /** At most two threads, the machine's cores permitting: reading and scanning is I/O bound. */
  Parallel() {
    this(Math.max(1, Math.min(2, Runtime.getRuntime().availableProcessors())));
  }

  /** {@code threads} threads; a test's way to have two on any machine. */
  Parallel(int threads) {
    this.threads = threads;
    AtomicInteger made = new AtomicInteger();
    this.pool =
        Executors.newFixedThreadPool(
            threads,
            task -> {
              Thread thread = new Thread(task, "deepsearch-scan-" + made.incrementAndGet());
              thread.setDaemon(true);
              return thread;
            });
  }

  /**
   * Runs {@code work} for every index in {@code [0, count)}, in about that order.
   *
   * @param progress run on this thread every {@value #REPORT_MILLIS} ms while the work goes on
   */
  <S> void forEach(int count, Supplier<S> state, Work<S> work, Runnable progress) throws Exception {
    AtomicInteger next = new AtomicInteger();
    List<Future<?>> running = new ArrayList<>();
    for (int t = 0; t < Math.min(threads, count); t++) {
      running.add(
          pool.submit(
              () -> {
                try {
                  S own = state.get();
                  for (int i = next.getAndIncrement(); i < count; i = next.getAndIncrement()) {
                    if (Thread.interrupted()) {
                      throw new InterruptedException("the search was stopped");
                    }
                    work.run(own, i);
                  }
                  return null;
                } catch (Exception | Error e) {
                  // The others take no further document, so the wait below, which goes through
                  // the workers in order, reaches this failure soon whichever worker it is.
                  next.set(count);
                  throw e;
                }
              }));
    }
    try {
      for (Future<?> future : running) {
        while (true) {
          try {
            future.get(REPORT_MILLIS, TimeUnit.MILLISECONDS);
            break;
          } catch (TimeoutException e) {
            progress.run();
          }
        }
      }
    } catch (ExecutionException e) {
      running.forEach(f -> f.cancel(true));
      Throwable cause = e.getCause();
      if (cause instanceof Exception exception) {
        throw exception;
      }
      throw (Error) cause;
    } catch (InterruptedException e) {
      running.forEach(f -> f.cancel(true));
      throw e;
    }
  }

  @Override
  public void close() {
    pool.shutdownNow();
  }
}
