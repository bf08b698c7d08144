package io.asyncjobs.kinds.deepsearch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The scan threads of one attempt: every document once, and stopped by a cancel or a failure. */
class ParallelTest {

  @Test
  void shouldRunEveryIndexOnceWithOneStatePerThread() throws Exception {
    Set<Integer> seen = ConcurrentHashMap.newKeySet();
    Map<Object, Set<Thread>> threadsOfState = new ConcurrentHashMap<>();
    try (Parallel parallel = new Parallel(2)) {
      parallel.forEach(
          500,
          Object::new,
          (state, i) -> {
            threadsOfState
                .computeIfAbsent(state, s -> ConcurrentHashMap.newKeySet())
                .add(Thread.currentThread());
            assertThat(seen.add(i)).isTrue();
            Thread.sleep(1); // long enough that both threads take some
          },
          () -> {});
    }
    assertThat(seen).hasSize(500);
    assertThat(threadsOfState).hasSizeBetween(1, 2);
    assertThat(threadsOfState.values()).allSatisfy(threads -> assertThat(threads).hasSize(1));
  }

  @Test
  void shouldStopItsThreadsAndThrowWhenTheAttemptIsInterrupted() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch stopped = new CountDownLatch(1);
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    Thread attempt =
        new Thread(
            () -> {
              try {
                runMany(
                    (state, i) -> {
                      started.countDown();
                      try {
                        Thread.sleep(60_000); // a document that takes long to read
                      } catch (InterruptedException e) {
                        stopped.countDown();
                        throw e;
                      }
                    });
              } catch (Throwable e) {
                thrown.set(e);
              }
            });
    attempt.start();
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    attempt.interrupt(); // what a cancel or a timeout does to the attempt's thread
    attempt.join(10_000);
    assertThat(attempt.isAlive()).isFalse();
    assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
    assertThat(stopped.await(10, TimeUnit.SECONDS)).as("the worker was interrupted").isTrue();
  }

  @Test
  void shouldRethrowAWorkersFailureAndStopTheOthers() {
    AtomicInteger ran = new AtomicInteger();
    assertThatThrownBy(
            () ->
                runMany(
                    (state, i) -> {
                      ran.incrementAndGet();
                      if (i == 10) {
                        throw new IOException("disk gone");
                      }
                      Thread.sleep(1);
                    }))
        .isInstanceOf(IOException.class)
        .hasMessage("disk gone");
    assertThat(ran.get()).isLessThan(10_000);
  }

  @Test
  void shouldRethrowTheSecondWorkersFailureWhileTheFirstStillHasWork() {
    // The wait goes through the workers in order: a failure of the second must still end the
    // first at once (it used to take the first's whole share: minutes here, and CI hung on it).
    assertTimeoutPreemptively(
        Duration.ofSeconds(30),
        () ->
            assertThatThrownBy(
                    () -> {
                      try (Parallel parallel = new Parallel(2)) {
                        parallel.forEach(
                            1_000_000,
                            () -> Thread.currentThread().getName(),
                            (thread, i) -> {
                              if (thread.endsWith("-2")) {
                                throw new IOException("disk gone");
                              }
                              Thread.sleep(1);
                            },
                            () -> {});
                      }
                    })
                .isInstanceOf(IOException.class));
  }

  /** A million documents through a pool of the default size, without a state or progress. */
  private static void runMany(Parallel.Work<Object> work) throws Exception {
    try (Parallel parallel = new Parallel()) {
      parallel.forEach(1_000_000, () -> null, work, () -> {});
    }
  }
}
