package io.asyncjobs.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * How callers share a piece of work: alone at once, together when they pile up behind a flush, each
 * with its own outcome, and never stranded when a flush fails.
 */
class SharedCommitTest {

  private final ExecutorService callers = Executors.newCachedThreadPool();
  private final List<List<Integer>> batches = new CopyOnWriteArrayList<>();

  @AfterEach
  void tearDown() {
    callers.shutdownNow();
  }

  /** Work that records each batch, holds the first one until {@code release}, answers n * 10. */
  private SharedCommit.Work<Integer, Integer> recording(CountDownLatch release) {
    return holdingFirst(
        release, requests -> requests.stream().map(n -> SharedCommit.Outcome.of(n * 10)).toList());
  }

  /** Work that records each batch and holds the first one until {@code release}, then answers. */
  private SharedCommit.Work<Integer, Integer> holdingFirst(
      CountDownLatch release, SharedCommit.Work<Integer, Integer> answer) {
    return requests -> {
      batches.add(List.copyOf(requests));
      if (batches.size() == 1) {
        await(release);
      }
      return answer.run(requests);
    };
  }

  /**
   * Starts caller 0, whose batch is held, then callers 1 to {@code behind} one after the other,
   * each waiting before the next arrives; the futures in that order.
   */
  private List<Future<Integer>> firstAndBehind(SharedCommit<Integer, Integer> shared, int behind)
      throws InterruptedException {
    List<Future<Integer>> futures = new ArrayList<>();
    futures.add(callers.submit(() -> shared.run(0)));
    awaitBatches(1);
    for (int i = 1; i <= behind; i++) {
      int n = i;
      futures.add(callers.submit(() -> shared.run(n)));
      awaitWaiting(shared, i);
    }
    return futures;
  }

  @Test
  void shouldRunACallerAloneAtOnceInABatchOfItsOwn() {
    SharedCommit<Integer, Integer> shared =
        new SharedCommit<>(recording(new CountDownLatch(0)), 1, 100);

    assertThat(shared.run(1)).isEqualTo(10);
    assertThat(shared.run(2)).isEqualTo(20);

    assertThat(batches).containsExactly(List.of(1), List.of(2));
  }

  @Test
  void shouldPutEveryCallerWaitingBehindAFlushIntoTheNextBatchInArrivalOrder() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    SharedCommit<Integer, Integer> shared = new SharedCommit<>(recording(release), 1, 100);
    List<Future<Integer>> started = firstAndBehind(shared, 5);
    Future<Integer> first = started.get(0);
    List<Future<Integer>> behind = started.subList(1, 6);

    release.countDown();

    assertThat(first.get(10, TimeUnit.SECONDS)).isZero();
    for (int i = 0; i < 5; i++) {
      assertThat(behind.get(i).get(10, TimeUnit.SECONDS)).isEqualTo((i + 1) * 10);
    }
    assertThat(batches).containsExactly(List.of(0), List.of(1, 2, 3, 4, 5));
  }

  @Test
  void shouldRunAsManyFlushesAtOnceAsAllowedBeforeCallersWait() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch bothIn = new CountDownLatch(2);
    SharedCommit<Integer, Integer> shared =
        new SharedCommit<>(
            requests -> {
              batches.add(List.copyOf(requests));
              bothIn.countDown();
              if (requests.get(0) < 2) {
                await(release);
              }
              return requests.stream().map(n -> SharedCommit.Outcome.of(n)).toList();
            },
            2,
            100);
    Future<Integer> a = callers.submit(() -> shared.run(0));
    Future<Integer> b = callers.submit(() -> shared.run(1));

    assertThat(bothIn.await(10, TimeUnit.SECONDS)).as("two flushes in flight at once").isTrue();
    Future<Integer> c = callers.submit(() -> shared.run(2));
    awaitWaiting(shared, 1);
    release.countDown();

    assertThat(List.of(a.get(10, TimeUnit.SECONDS), b.get(10, TimeUnit.SECONDS)))
        .containsExactly(0, 1);
    assertThat(c.get(10, TimeUnit.SECONDS)).isEqualTo(2);
  }

  @Test
  void shouldGiveEachCallerItsOwnFailure() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    SharedCommit<Integer, Integer> shared =
        new SharedCommit<>(
            holdingFirst(
                release,
                requests -> {
                  return requests.stream()
                      .map(
                          n ->
                              n == 2
                                  ? SharedCommit.Outcome.<Integer>failed(
                                      new IllegalArgumentException("refused " + n))
                                  : SharedCommit.Outcome.of(n))
                      .toList();
                }),
            1,
            100);
    List<Future<Integer>> started = firstAndBehind(shared, 2);
    Future<Integer> first = started.get(0);
    Future<Integer> one = started.get(1);
    Future<Integer> two = started.get(2);
    release.countDown();

    assertThat(first.get(10, TimeUnit.SECONDS)).isZero();
    assertThat(one.get(10, TimeUnit.SECONDS)).isEqualTo(1);
    assertThatThrownBy(() -> two.get(10, TimeUnit.SECONDS)).hasRootCauseMessage("refused 2");
    assertThat(batches).containsExactly(List.of(0), List.of(1, 2));
  }

  @Test
  void shouldFailTheWholeBatchWhenItsWorkThrowsAndKeepServingCallersAfterwards() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    SharedCommit<Integer, Integer> shared =
        new SharedCommit<>(
            holdingFirst(
                release,
                requests -> {
                  if (batches.size() == 2) {
                    throw new IllegalStateException("database gone");
                  }
                  return requests.stream().map(n -> SharedCommit.Outcome.of(n)).toList();
                }),
            1,
            100);
    List<Future<Integer>> started = firstAndBehind(shared, 2);
    Future<Integer> first = started.get(0);
    Future<Integer> one = started.get(1);
    Future<Integer> two = started.get(2);
    release.countDown();

    assertThat(first.get(10, TimeUnit.SECONDS)).isZero();
    assertThatThrownBy(() -> one.get(10, TimeUnit.SECONDS)).hasRootCauseMessage("database gone");
    assertThatThrownBy(() -> two.get(10, TimeUnit.SECONDS)).hasRootCauseMessage("database gone");
    // The failed flight ended: the next caller runs at once instead of waiting for ever.
    assertThat(
            CompletableFuture.supplyAsync(() -> shared.run(3), callers).get(10, TimeUnit.SECONDS))
        .isEqualTo(3);
  }

  @Test
  void shouldFailABatchWhoseWorkLeavesACallerWithoutAnOutcomeRatherThanStrandIt() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    SharedCommit<Integer, Integer> shared =
        new SharedCommit<>(
            holdingFirst(
                release,
                requests -> {
                  List<SharedCommit.Outcome<Integer>> outcomes = new ArrayList<>();
                  for (int n : requests) {
                    outcomes.add(n == 2 ? null : SharedCommit.Outcome.of(n));
                  }
                  return outcomes;
                }),
            1,
            100);
    List<Future<Integer>> started = firstAndBehind(shared, 2);
    Future<Integer> first = started.get(0);
    Future<Integer> one = started.get(1);
    Future<Integer> two = started.get(2);
    release.countDown();

    assertThat(first.get(10, TimeUnit.SECONDS)).isZero();
    assertThatThrownBy(() -> one.get(10, TimeUnit.SECONDS))
        .hasRootCauseMessage("work answered 2 of 2 requests, or a null");
    assertThatThrownBy(() -> two.get(10, TimeUnit.SECONDS))
        .hasRootCauseMessage("work answered 2 of 2 requests, or a null");
  }

  @Test
  void shouldLeadWithTheInterruptFlagClearedAndGiveItBackAfterwards() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    List<Boolean> interruptedInWork = new CopyOnWriteArrayList<>();
    SharedCommit<Integer, Integer> shared =
        new SharedCommit<>(
            holdingFirst(
                release,
                requests -> {
                  interruptedInWork.add(Thread.currentThread().isInterrupted());
                  return requests.stream().map(n -> SharedCommit.Outcome.of(n)).toList();
                }),
            1,
            100);
    Future<Integer> first = callers.submit(() -> shared.run(0));
    awaitBatches(1);
    Thread[] waiter = new Thread[1];
    Future<Boolean> flagAfter =
        callers.submit(
            () -> {
              waiter[0] = Thread.currentThread();
              shared.run(1);
              return Thread.currentThread().isInterrupted();
            });
    awaitWaiting(shared, 1);
    waiter[0].interrupt();
    release.countDown();

    first.get(10, TimeUnit.SECONDS);
    assertThat(flagAfter.get(10, TimeUnit.SECONDS)).as("the caller's flag, given back").isTrue();
    assertThat(interruptedInWork).containsExactly(false, false);
  }

  @Test
  void shouldSplitCallersWaitingBeyondTheBatchLimitIntoSeveralBatches() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    SharedCommit<Integer, Integer> shared = new SharedCommit<>(recording(release), 1, 2);
    List<Future<Integer>> started = firstAndBehind(shared, 5);
    Future<Integer> first = started.get(0);
    List<Future<Integer>> behind = started.subList(1, 6);
    release.countDown();

    first.get(10, TimeUnit.SECONDS);
    for (Future<Integer> f : behind) {
      f.get(10, TimeUnit.SECONDS);
    }
    assertThat(batches).containsExactly(List.of(0), List.of(1, 2), List.of(3, 4), List.of(5));
  }

  @Test
  void shouldAnswerEveryCallerOnceUnderContentionAndEndEveryFlight() throws Exception {
    // Two flights ending at the same moment must not hand the same waiting callers a batch twice,
    // nor leave a flight counted that no one runs (then callers would wait for ever).
    SharedCommit<Integer, Integer> shared =
        new SharedCommit<>(
            requests -> {
              batches.add(List.copyOf(requests));
              Thread.yield();
              return requests.stream().map(n -> SharedCommit.Outcome.of(-n)).toList();
            },
            2,
            3);
    int threads = 8;
    int calls = 2_000;
    List<Future<Integer>> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int base = t * calls;
      workers.add(
          callers.submit(
              () -> {
                int wrong = 0;
                for (int i = base; i < base + calls; i++) {
                  if (shared.run(i) != -i) {
                    wrong++;
                  }
                }
                return wrong;
              }));
    }
    for (Future<Integer> w : workers) {
      assertThat(w.get(60, TimeUnit.SECONDS)).as("callers answered another's outcome").isZero();
    }
    assertThat(batches.stream().mapToInt(List::size).sum()).isEqualTo(threads * calls);
    assertThat(batches).allSatisfy(b -> assertThat(b).hasSizeBetween(1, 3));
    assertThat(shared.waiting()).isZero();
    assertThat(shared.run(-1)).isEqualTo(1);
  }

  private void awaitBatches(int n) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (batches.size() < n) {
      assertThat(System.nanoTime()).as("batch %d started", n).isLessThan(deadline);
      Thread.sleep(1);
    }
  }

  private static void awaitWaiting(SharedCommit<?, ?> shared, int n) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (shared.waiting() < n) {
      assertThat(System.nanoTime()).as("%d callers waiting", n).isLessThan(deadline);
      Thread.sleep(1);
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      if (!latch.await(10, TimeUnit.SECONDS)) {
        throw new IllegalStateException("never released");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
