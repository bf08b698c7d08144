package io.asyncjobs.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.queue.CancelOutcome;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobStatus;
import io.asyncjobs.settings.SettingsOverride;
import io.quarkus.test.junit.QuarkusTest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Claims that run ahead of the free threads ({@code jobs.services.<kind>.claim-ahead}): the jobs
 * claimed beyond the threads wait in this process for a thread. What a caller sees must stay what
 * it is without them: never more jobs running at once than max-concurrent, each job run once, its
 * start and its timeout counted from when a thread took it, and a job that waited when it was
 * cancelled, or when the lock was lost or handed over, never runs here.
 */
@QuarkusTest
class ClaimAheadTest extends ControlledKindFixture {

  @Test
  void shouldClaimAheadOfTheFreeThreadsButRunNoMoreAtOnceThanMaxConcurrent() throws Exception {
    aheadWithQuickJobsSeen(2, null);
    List<UUID> jobs = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      jobs.add(enqueue(Map.of("block", true)));
    }

    assertThat(service.runOnce().claimed()).isEqualTo(8);
    service.nextStarted();
    service.nextStarted();
    assertThat(count(JobStatus.RUNNING)).as("claimed, so running to a caller").isEqualTo(8);
    clock.advance(Duration.ofSeconds(5));
    for (int i = 0; i < 8; i++) {
      service.release(jobs.get(i));
      service.awaitReturned(jobs.get(i));
      if (i + 2 < 8) {
        // The freed thread takes the oldest job waiting.
        assertThat(service.nextStarted()).isEqualTo(jobs.get(i + 2));
      }
      service.runOnce();
      assertThat(service.active.get()).isLessThanOrEqualTo(2);
    }

    assertThat(count(JobStatus.DONE)).isEqualTo(8);
    assertThat(service.maxActive.get()).isEqualTo(2);
    assertThat(service.startOrder).hasSize(8).containsExactlyInAnyOrderElementsOf(jobs);
    assertThat(service.startOrder.subList(2, 8)).containsExactlyElementsOf(jobs.subList(2, 8));
    for (int i = 0; i < 8; i++) {
      Job job = queue.getJob(jobs.get(i)).orElseThrow();
      // The first two began at their claim; the others when a thread took them, after 5 s.
      assertThat(job.startedAt).as("job %d's start", i).isEqualTo(i < 2 ? T0 : T0.plusSeconds(5));
    }
  }

  @Test
  void shouldBeginNoJobClaimedAheadWhileTooManyOutcomesWaitToBeWritten() throws Exception {
    aheadWithQuickJobsSeen(2, null);
    service.claimAheadUnwritten(3);
    List<UUID> jobs = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      jobs.add(enqueue(Map.of()));
    }

    assertThat(service.runOnce().claimed()).isEqualTo(12);
    // Nothing writes outcomes between runs here (no wake-ups), as when the database is slow to
    // commit: the threads begin the 2 + 3 jobs the bound allows, then wait at the gate.
    awaitAtGate(2, 5);
    assertThat(service.startOrder).doesNotHaveDuplicates().isSubsetOf(jobs);
    assertThat(count(JobStatus.RUNNING)).as("claimed, so running to a caller").isEqualTo(12);
    service.runOnce(); // writes the five outcomes: five more may begin
    awaitAtGate(2, 10);
    assertThat(count(JobStatus.DONE)).isEqualTo(5);
    assertThat(service.startOrder).doesNotHaveDuplicates();
    service.runOnce();
    assertThat(service.awaitTasks(Duration.ofSeconds(5))).isTrue();
    service.runOnce();

    assertThat(count(JobStatus.DONE)).isEqualTo(12);
    assertThat(service.startOrder).containsExactlyInAnyOrderElementsOf(jobs);
    assertThat(service.begunAtStartGate()).as("every task left the gate").isZero();
  }

  @Test
  void shouldCountNothingAtTheStartGateOnceAThreadWaitingThereIsStoppedByALostLock()
      throws Exception {
    aheadWithQuickJobsSeen(2, null);
    service.claimAheadUnwritten(0); // a job begins only while fewer than two lack an outcome
    UUID quick = enqueue(Map.of());
    List<UUID> blocking =
        List.of(
            enqueue(Map.of("block", true)),
            enqueue(Map.of("block", true)),
            enqueue(Map.of("block", true)));
    assertThat(service.runOnce().claimed()).isEqualTo(4);
    service.awaitReturned(quick);
    // quick finished (its outcome unwritten) and one blocking job runs: the thread freed by quick
    // waits with another. The gate does not promise which blocking job goes first.
    awaitAtGate(1, 2);
    UUID running = service.startOrder.stream().filter(uid -> !uid.equals(quick)).findFirst().get();

    service.whenNotOwner(); // writes quick's outcome, interrupts the rest
    service.release(running);
    service.awaitReturned(running);
    // The threads interrupted at the gate and in the queue go back to pending once they have
    // returned, so the settle below is asserted on with every thread back. (Added for the CI
    // failures described below; it was not their cause.)
    assertThat(service.awaitTasks(Duration.ofSeconds(5))).as("every thread returned").isTrue();
    service.whenNotOwner();

    // This assertion failed twice in CI (06e8959, 3532970) after a first settle that had written
    // every task's fate, and never when run alone: it says which task is still in flight.
    assertThat(service.inFlightCount())
        .as(
            "in flight: %s (quick %s, running %s, begun %s, jobs %s)",
            describe(service.tasksInFlight()),
            quick,
            running,
            service.startOrder,
            db.query("SELECT uid, status, retry_count FROM jobs ORDER BY uid"))
        .isZero();
    assertThat(service.begunAtStartGate()).as("tasks still counted at the gate").isZero();
    assertThat(service.waitingAtStartGate()).isZero();
    assertThat(service.startOrder).containsExactlyInAnyOrder(quick, running);
    assertThat(queue.getJob(quick).orElseThrow().status).isEqualTo(JobStatus.DONE);
    for (UUID uid : blocking) {
      if (!uid.equals(running)) {
        Job back = queue.getJob(uid).orElseThrow();
        assertThat(back.status).as("never begun, so back unrun").isEqualTo(JobStatus.PENDING);
        assertThat(back.retryCount).isZero();
      }
    }
  }

  private static List<String> describe(List<Task> tasks) {
    return tasks.stream()
        .map(
            t ->
                t.job.uid
                    + (t.returned() ? " returned" : "")
                    + (t.abandoned() ? " abandoned" : "")
                    + (t.working() ? " working" : "")
                    + " epoch "
                    + t.epoch())
        .toList();
  }

  /** Waits until {@code threads} wait at the start gate with {@code begun} jobs begun so far. */
  private void awaitAtGate(int threads, int begun) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (service.waitingAtStartGate() != threads || service.startOrder.size() != begun) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            service.waitingAtStartGate()
                + " threads at the gate and "
                + service.startOrder.size()
                + " jobs begun, not "
                + threads
                + " and "
                + begun
                + " (begun: "
                + service.startOrder
                + ", in flight "
                + service.inFlightCount()
                + ", counted at the gate "
                + service.begunAtStartGate()
                + ", jobs "
                + db.query("SELECT uid, status, payload::text AS payload FROM jobs ORDER BY uid")
                + ")");
      }
      Thread.sleep(1);
    }
  }

  @Test
  void shouldFailACancelledJobThatWaitsForAThreadWithoutRunningIt() throws Exception {
    aheadWithQuickJobsSeen(1, null);
    UUID blocker = enqueue(Map.of("block", true));
    UUID victim = enqueue(Map.of("block", true));
    UUID after = enqueue(Map.of());
    assertThat(service.runOnce().claimed()).isEqualTo(3);
    assertThat(service.nextStarted()).isEqualTo(blocker);

    assertThat(bulk.cancelJob(victim)).isEqualTo(CancelOutcome.STOP_REQUESTED);
    service.runOnce();
    service.release(blocker);
    assertThat(service.nextStarted()).isEqualTo(after);
    service.awaitReturned(after);
    service.runOnce();

    Job cancelled = queue.getJob(victim).orElseThrow();
    assertThat(cancelled.status).isEqualTo(JobStatus.FAILED);
    assertThat(cancelled.error).isEqualTo("cancelled on request");
    assertThat(service.startOrder).containsExactly(blocker, after);
    assertThat(count(JobStatus.DONE)).isEqualTo(2);
    assertThat(service.inFlightCount()).isZero();
    assertThat(service.awaitTasks(Duration.ofSeconds(2))).as("no slot held by the victim").isTrue();
    assertThat(service.begunAtStartGate()).as("tasks still counted at the gate").isZero();
  }

  @Test
  void shouldNotTimeOutAJobWhileItWaitsForAThread() throws Exception {
    aheadWithQuickJobsSeen(1, 5L);
    UUID stuck = enqueue(Map.of("block", true));
    UUID waiting = enqueue(Map.of("block", true));
    assertThat(service.runOnce().claimed()).isEqualTo(2);
    service.nextStarted();

    clock.advance(Duration.ofSeconds(6));
    TickResult overdue = service.runOnce();
    assertThat(overdue.timedOut()).as("only the job that ran for 6 s").isEqualTo(1);
    assertThat(service.nextStarted()).isEqualTo(waiting);
    clock.advance(Duration.ofSeconds(4));
    assertThat(service.runOnce().timedOut()).as("4 s since its thread took it").isZero();
    service.release(waiting);
    service.awaitReturned(waiting);
    service.runOnce();

    assertThat(queue.getJob(stuck).orElseThrow().error).isEqualTo("timed out after 5 s");
    Job job = queue.getJob(waiting).orElseThrow();
    assertThat(job.status).isEqualTo(JobStatus.DONE);
    assertThat(job.startedAt).isEqualTo(T0.plusSeconds(6));
    assertThat(job.durationMs).isEqualTo(4000L);
  }

  @Test
  void shouldPutJobsThatWaitForAThreadBackUnrunWhenTheLockIsLost() throws Exception {
    aheadWithQuickJobsSeen(1, null);
    UUID running = enqueue(Map.of("block", true));
    List<UUID> waiting = List.of(enqueue(Map.of()), enqueue(Map.of()), enqueue(Map.of()));
    assertThat(service.runOnce().claimed()).isEqualTo(4);
    service.nextStarted();

    service.whenNotOwner();
    service.awaitReturned(running);
    service.whenNotOwner();

    assertThat(service.inFlightCount()).isZero();
    assertThat(service.startOrder).containsExactly(running);
    for (UUID uid : waiting) {
      Job back = queue.getJob(uid).orElseThrow();
      assertThat(back.status).isEqualTo(JobStatus.PENDING);
      assertThat(back.retryCount).isZero();
      assertThat(back.startedAt).isNull();
    }
  }

  @Test
  void shouldHandJobsThatWaitForAThreadBackUnrunOnGracefulHandover() throws Exception {
    aheadWithQuickJobsSeen(1, null);
    UUID stuck = enqueue(Map.of("block", true));
    List<UUID> waiting = List.of(enqueue(Map.of()), enqueue(Map.of()));
    assertThat(service.runOnce().claimed()).isEqualTo(3);
    service.nextStarted();

    int released;
    try {
      released = manager.handOver(Duration.ofMillis(300));
    } finally {
      manager.all().stream()
          .filter(JobService.class::isInstance)
          .forEach(s -> ((JobService) s).endDrain());
    }

    assertThat(released).isEqualTo(3);
    assertThat(service.startOrder).containsExactly(stuck);
    assertThat(service.begunAtStartGate()).as("tasks still counted at the gate").isZero();
    for (UUID uid : List.of(stuck, waiting.get(0), waiting.get(1))) {
      Job job = queue.getJob(uid).orElseThrow();
      assertThat(job.status).isEqualTo(JobStatus.PENDING);
      assertThat(job.retryCount).isZero();
    }
  }

  @Test
  void shouldClaimOnlyForFreeThreadsWhileTheKindsJobsTakeLongerThanTheWindow() throws Exception {
    settings.update("controlled", new SettingsOverride(null, 2, null, null));
    service.claimAhead(Duration.ofMillis(1));
    UUID slow = enqueue(Map.of("block", true));
    service.runOnce();
    service.nextStarted();
    Thread.sleep(50); // the kind's jobs take 50 ms, the window is 1 ms
    service.release(slow);
    service.awaitReturned(slow);
    service.runOnce();
    for (int i = 0; i < 5; i++) {
      enqueue(Map.of("block", true));
    }

    assertThat(service.runOnce().claimed()).isEqualTo(2);
  }

  @Test
  void shouldClaimOnlyForFreeThreadsBeforeAnyJobOfTheKindRan() throws Exception {
    settings.update("controlled", new SettingsOverride(null, 2, null, null));
    service.claimAhead(Duration.ofSeconds(10));
    for (int i = 0; i < 5; i++) {
      enqueue(Map.of("block", true));
    }

    assertThat(service.runOnce().claimed()).isEqualTo(2);
  }

  /**
   * Sets max-concurrent (and the timeout in seconds, when given), turns claim-ahead on with a
   * window far longer than the kind's jobs, and runs two quick jobs so that their run time is
   * known.
   */
  private void aheadWithQuickJobsSeen(int maxConcurrent, Long timeoutSeconds) throws Exception {
    settings.update("controlled", new SettingsOverride(null, maxConcurrent, timeoutSeconds, null));
    service.claimAhead(Duration.ofSeconds(10));
    enqueue(Map.of());
    enqueue(Map.of());
    for (int i = 0; i < 5 && count(JobStatus.DONE) < 2; i++) {
      service.runOnce();
      assertThat(service.awaitTasks(Duration.ofSeconds(5))).isTrue();
      service.runOnce();
    }
    assertThat(count(JobStatus.DONE)).isEqualTo(2);
    // The test proper counts threads at the gate from zero: run until nothing of the set-up is in
    // flight or counted there (bounded), and say so if it does not settle.
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while ((service.inFlightCount() > 0 || service.begunAtStartGate() > 0)
        && System.nanoTime() < deadline) {
      service.runOnce();
      Thread.sleep(5);
    }
    assertThat(service.inFlightCount()).as("in flight after the set-up").isZero();
    assertThat(service.begunAtStartGate()).as("counted at the gate after the set-up").isZero();
    assertThat(service.waitingAtStartGate()).as("waiting at the gate after the set-up").isZero();
    db.clearJobs();
    service.reset();
  }

  private long count(JobStatus status) {
    return (long)
        db.query("SELECT count(*) AS n FROM jobs WHERE status = ?", status.dbValue())
            .get(0)
            .get("n");
  }
}
