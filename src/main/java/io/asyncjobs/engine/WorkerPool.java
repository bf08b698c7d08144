package io.asyncjobs.engine;

import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads one service's {@code process} calls run on: as many as the service's {@code
 * max-concurrent}, resized when that setting changes. It counts a task as occupying a thread until
 * the task really returns, so a timed-out task that ignores its interrupt still holds its slot and
 * the service never runs more jobs at once than allowed.
 */
final class WorkerPool {

  private final Executor executor;

  WorkerPool(String name, int size) {
    this.executor = new Executor(name, size);
  }

  /** Runs a task on one of the threads; cancelling the future interrupts it. */
  Future<?> submit(Runnable task) {
    return executor.submit(task);
  }

  /** Sets the number of threads. */
  void resize(int size) {
    if (size > executor.getMaximumPoolSize()) {
      executor.setMaximumPoolSize(size);
      executor.setCorePoolSize(size);
    } else if (size < executor.getMaximumPoolSize()) {
      executor.setCorePoolSize(size);
      executor.setMaximumPoolSize(size);
    }
  }

  /** Interrupts every running task and stops the threads. */
  void shutdownNow() {
    executor.shutdownNow();
  }

  /** Waits for the threads to end after a shutdown. */
  boolean awaitTermination(long millis) throws InterruptedException {
    return executor.awaitTermination(millis, TimeUnit.MILLISECONDS);
  }

  private static final class Executor extends ThreadPoolExecutor {

    Executor(String name, int size) {
      super(size, size, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), threads(name));
      allowCoreThreadTimeOut(true);
    }

    private static ThreadFactory threads(String name) {
      AtomicInteger counter = new AtomicInteger();
      return r -> {
        Thread thread = new Thread(r, "jobs-" + name + "-" + counter.incrementAndGet());
        thread.setDaemon(true);
        return thread;
      };
    }
  }
}
