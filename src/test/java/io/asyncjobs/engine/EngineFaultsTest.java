package io.asyncjobs.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.lock.Epochs;
import io.asyncjobs.lock.OwnerLock;
import io.asyncjobs.lock.Trust;
import io.asyncjobs.queue.CancelOutcome;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobBulk;
import io.asyncjobs.queue.JobQueue;
import io.asyncjobs.queue.JobStatus;
import io.asyncjobs.settings.SettingsOverride;
import io.asyncjobs.settings.SettingsStore;
import io.asyncjobs.testing.Database;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * The engine when the database or the lock misbehave: writes that fail, outcomes the database
 * refuses, a confirmation that is late, a lock that is lost or superseded, a lock session that is
 * killed and taken back. Faults are real (a trigger that fails the write, a terminated session, an
 * epoch taken behind the owner's back); the lock's trust is steered only where waiting for real
 * would take seconds.
 */
@QuarkusTest
class EngineFaultsTest {

  @Inject ControlledService service;
  @Inject ServiceManager manager;
  @Inject JobQueue queue;
  @Inject JobBulk bulk;
  @Inject SettingsStore settings;
  @Inject OwnerLock realLock;
  @Inject Database db;
  @Inject MeterRegistry registry;

  private SteerableLock lock;

  @BeforeEach
  void setUp() throws Exception {
    service.reset();
    db.clearJobs();
    db.update("DELETE FROM service_settings");
    db.update("DROP TRIGGER IF EXISTS fail_outcomes ON jobs");
    awaitTrue(realLock::isOwner, Duration.ofSeconds(10));
    lock = new SteerableLock(realLock);
    service.attachLock(lock);
    service.runOnce();
    service.reset();
  }

  @AfterEach
  void tearDown() throws Exception {
    db.update("DROP TRIGGER IF EXISTS fail_outcomes ON jobs");
    lock.trust = null;
    lock.settled = null;
    service.reset();
    service.runOnce();
    service.attachLock(realLock);
    db.update("DELETE FROM service_settings");
    awaitTrue(realLock::isOwner, Duration.ofSeconds(10));
  }

  @Test
  void shouldKeepAnOutcomeWhoseWriteFailedAndWriteItOnTheNextRun() throws Exception {
    UUID uid = enqueue(Map.of("block", true, "result", Map.of("ok", true)));
    service.runOnce();
    service.nextStarted();
    // The database refuses the write as if the connection went away.
    db.update(
        "CREATE OR REPLACE FUNCTION fail_outcome() RETURNS trigger LANGUAGE plpgsql AS $$"
            + " BEGIN RAISE EXCEPTION 'connection lost' USING ERRCODE = '08006'; END $$");
    db.update(
        "CREATE TRIGGER fail_outcomes BEFORE UPDATE ON jobs FOR EACH ROW"
            + " WHEN (NEW.status = 'done') EXECUTE FUNCTION fail_outcome()");
    service.release(uid);
    service.awaitReturned(uid);

    TickResult failedWrite = service.runOnce();

    assertThat(failedWrite.done()).isZero();
    assertThat(service.inFlightCount()).as("the outcome is kept").isEqualTo(1);
    assertThat(queue.getJob(uid).orElseThrow().status).isEqualTo(JobStatus.RUNNING);
    assertThat(failedWrite.requeued()).as("nothing rescues a job whose outcome waits").isZero();

    db.update("DROP TRIGGER fail_outcomes ON jobs");
    TickResult next = service.runOnce();

    assertThat(next.done()).isEqualTo(1);
    Job job = queue.getJob(uid).orElseThrow();
    assertThat(job.status).isEqualTo(JobStatus.DONE);
    assertThat(job.result).containsEntry("ok", true);
    assertThat(job.retryCount).isZero();
    assertThat(service.startOrder).as("it ran once").containsExactly(uid);
  }

  @Test
  void shouldKeepTheClaimWhenTheOutcomeWriteBesideItFailsAndRunEachJobOnce() throws Exception {
    int threads = Refiller.SIDE_WRITE_MIN + 6;
    List<UUID> jobs = finishedUnwritten(threads, 3 * threads);
    failUpdatesTo("done");

    TickResult wake = service.wakeOnce();

    assertThat(wake.done()).isZero();
    assertThat(wake.claimed()).as("the claim beside the failed write stands").isEqualTo(threads);
    assertThat(service.inFlightCount()).as("the outcomes are kept").isEqualTo(2 * threads);
    assertThat(countByStatus("running")).isEqualTo(2 * threads);
    // The claimed jobs wait at the start gate while as many finished ones are unwritten.
    awaitTrue(() -> service.waitingAtStartGate() == threads, Duration.ofSeconds(5));
    assertThat(service.startOrder).hasSize(threads);

    db.update("DROP TRIGGER fail_outcomes ON jobs");
    assertThat(service.wakeOnce().done()).isEqualTo(threads);
    assertThat(service.awaitTasks(Duration.ofSeconds(5))).as("the gate let them in").isTrue();
    for (int run = 0; run < 10 && countByStatus("done") < jobs.size(); run++) {
      service.wakeOnce();
      assertThat(service.awaitTasks(Duration.ofSeconds(5))).isTrue();
    }
    assertThat(countByStatus("done")).isEqualTo(jobs.size());
    assertThat(service.startOrder).as("each ran once").doesNotHaveDuplicates().hasSize(jobs.size());
    assertThat(service.inFlightCount()).isZero();
  }

  @Test
  void shouldWriteTheOutcomesWhenTheClaimBesideThemFails() throws Exception {
    int threads = Refiller.SIDE_WRITE_MIN + 6;
    List<UUID> jobs = finishedUnwritten(threads, 2 * threads);
    failUpdatesTo("running");

    TickResult wake = service.wakeOnce();

    assertThat(wake.done()).as("the write beside the failed claim stands").isEqualTo(threads);
    assertThat(wake.claimed()).isZero();
    assertThat(service.inFlightCount()).isZero();
    assertThat(countByStatus("pending")).isEqualTo(threads);

    db.update("DROP TRIGGER fail_outcomes ON jobs");
    assertThat(service.wakeOnce().claimed()).isEqualTo(threads);
    assertThat(service.awaitTasks(Duration.ofSeconds(5))).isTrue();
    assertThat(service.wakeOnce().done()).isEqualTo(threads);
    assertThat(countByStatus("done")).isEqualTo(jobs.size());
    assertThat(service.startOrder).as("each ran once").doesNotHaveDuplicates().hasSize(jobs.size());
  }

  /** The database refuses every update to {@code status}, as if the connection went away. */
  private void failUpdatesTo(String status) {
    db.update(
        "CREATE OR REPLACE FUNCTION fail_outcome() RETURNS trigger LANGUAGE plpgsql AS $$"
            + " BEGIN RAISE EXCEPTION 'connection lost' USING ERRCODE = '08006'; END $$");
    db.update(
        "CREATE TRIGGER fail_outcomes BEFORE UPDATE ON jobs FOR EACH ROW"
            + " WHEN (NEW.status = '"
            + status
            + "') EXECUTE FUNCTION fail_outcome()");
  }

  /**
   * {@code count} jobs queued for a kind of {@code threads} threads, the first {@code threads}
   * claimed by a tick and finished, their outcomes unwritten: the next wake-up carries them all.
   */
  private List<UUID> finishedUnwritten(int threads, int count) throws InterruptedException {
    settings.update("controlled", new SettingsOverride(null, threads, null, null));
    List<UUID> jobs = enqueueMany(count);
    assertThat(service.runOnce().claimed()).isEqualTo(threads);
    assertThat(service.awaitTasks(Duration.ofSeconds(5))).isTrue();
    return jobs;
  }

  private List<UUID> enqueueMany(int count) {
    List<UUID> jobs = new java.util.ArrayList<>();
    for (int i = 0; i < count; i++) {
      jobs.add(enqueue(Map.of("result", Map.of("i", i))));
    }
    return jobs;
  }

  private long countByStatus(String status) {
    return ((Number)
            db.query("SELECT count(*) AS n FROM jobs WHERE status = ?", status).get(0).get("n"))
        .longValue();
  }

  @Test
  void shouldKeepAFailedAttemptWhoseWriteFailedAndRunTheJobOnlyOnceMoreAfterIt() throws Exception {
    settings.update("controlled", new SettingsOverride(null, 2, null, null, null, null, null, 3));
    service.runOnce(); // reads the settings
    UUID uid = enqueue(Map.of("block", true, "fail_io_attempts", 1));
    service.runOnce();
    service.nextStarted();
    // The database refuses the attempt's write (running back to pending) as if it went away.
    db.update(
        "CREATE OR REPLACE FUNCTION fail_outcome() RETURNS trigger LANGUAGE plpgsql AS $$"
            + " BEGIN RAISE EXCEPTION 'connection lost' USING ERRCODE = '08006'; END $$");
    db.update(
        "CREATE TRIGGER fail_outcomes BEFORE UPDATE ON jobs FOR EACH ROW"
            + " WHEN (OLD.status = 'running' AND NEW.status = 'pending')"
            + " EXECUTE FUNCTION fail_outcome()");
    service.release(uid);
    service.awaitReturned(uid);

    TickResult failedWrite = service.runOnce();
    assertThat(failedWrite.rescheduled()).isZero();
    assertThat(service.inFlightCount()).as("the failed attempt is kept").isEqualTo(1);
    Job stillRunning = queue.getJob(uid).orElseThrow();
    assertThat(stillRunning.status).isEqualTo(JobStatus.RUNNING);
    assertThat(stillRunning.attempt).isZero();
    assertThat(failedWrite.requeued()).as("nothing rescues a job whose outcome waits").isZero();

    db.update("DROP TRIGGER fail_outcomes ON jobs");
    assertThat(service.runOnce().rescheduled()).isEqualTo(1);
    Job waiting = queue.getJob(uid).orElseThrow();
    assertThat(waiting.status).isEqualTo(JobStatus.PENDING);
    assertThat(waiting.attempt).isEqualTo(1);
    assertThat(waiting.retryCount).as("not an orphan recovery").isZero();
    assertThat(service.runOnce().claimed()).as("not before its backoff").isZero();

    db.update("UPDATE jobs SET delayed_until = now() WHERE uid = ?", uid);
    service.runOnce();
    service.release(uid);
    service.awaitReturned(uid);
    service.runOnce();
    assertThat(queue.getJob(uid).orElseThrow().status).isEqualTo(JobStatus.DONE);
    assertThat(service.startOrder).as("twice, one after the other").containsExactly(uid, uid);
    assertThat(service.maxActive.get()).isEqualTo(1);
  }

  @Test
  void shouldNotWriteAFailedAttemptOnceANewerEpochWasTaken() throws Exception {
    settings.update("controlled", new SettingsOverride(null, 2, null, null, null, null, null, 3));
    service.runOnce();
    UUID uid = enqueue(Map.of("block", true, "fail_io_attempts", 1));
    service.runOnce();
    service.nextStarted();
    long intruder;
    try (Connection c = db.dataSource().getConnection()) {
      intruder = Epochs.take(c, realLock.name(), "intruder");
    }
    // The intruder's claim stamps the row as its own, as a new owner would.
    db.update("UPDATE jobs SET epoch = ? WHERE uid = ?", intruder, uid);
    service.release(uid);
    service.awaitReturned(uid);

    TickResult fenced = service.runOnce();

    assertThat(fenced.rescheduled()).isZero();
    assertThat(fenced.fenced()).isEqualTo(1);
    Job job = queue.getJob(uid).orElseThrow();
    assertThat(job.status).as("left to the newer owner").isEqualTo(JobStatus.RUNNING);
    assertThat(job.attempt).isZero();
    assertThat(job.epoch).isEqualTo(intruder);
    awaitTrue(() -> realLock.isOwner() && realLock.epoch() > intruder, Duration.ofSeconds(10));
  }

  @Test
  void shouldFailOnlyTheJobWhoseResultTheDatabaseRefuses() throws Exception {
    settings.update("controlled", new SettingsOverride(null, 2, null, null));
    // jsonb has no NUL character: PostgreSQL refuses this result.
    UUID refused = enqueue(Map.of("block", true, "result_with_nul", true));
    UUID fine = enqueue(Map.of("block", true, "result", Map.of("ok", true)));
    assertThat(service.runOnce().claimed()).isEqualTo(2);
    service.nextStarted();
    service.nextStarted();
    service.release(refused);
    service.release(fine);
    service.awaitReturned(refused);
    service.awaitReturned(fine);

    TickResult result = service.runOnce();

    assertThat(result.done()).isEqualTo(1);
    assertThat(result.failed()).isEqualTo(1);
    assertThat(queue.getJob(fine).orElseThrow().status).isEqualTo(JobStatus.DONE);
    Job failed = queue.getJob(refused).orElseThrow();
    assertThat(failed.status).isEqualTo(JobStatus.FAILED);
    assertThat(failed.error).startsWith("its result could not be stored");
    assertThat(service.inFlightCount()).isZero();
  }

  @Test
  void shouldPutAJobBackWhenItFailedBecauseTheDatabaseWentAway() throws Exception {
    UUID uid = enqueue(Map.of("fail_sqlstate", "57P01"));
    UUID ownFault = enqueue(Map.of("fail_sqlstate", "23505"));
    settings.update("controlled", new SettingsOverride(null, 2, null, null));
    service.runOnce();
    service.awaitTasks(Duration.ofSeconds(5));

    double before = putBack("database");
    TickResult result = service.runOnce();

    assertThat(result.retried()).isEqualTo(1);
    assertThat(putBack("database") - before)
        .as("jobs_put_back_total{reason=database}")
        .isEqualTo(1);
    Job back = queue.getJob(uid).orElseThrow();
    assertThat(back.status).isIn(JobStatus.PENDING, JobStatus.RUNNING);
    assertThat(back.retryCount).isEqualTo(1);
    assertThat(queue.getJob(ownFault).orElseThrow().status)
        .as("an error the job caused itself still fails it")
        .isEqualTo(JobStatus.FAILED);
  }

  /**
   * A running job is cancelled, then its attempt fails because the database went away. A job put
   * back for that runs again; a cancelled one must fail as cancelled instead, as a recovery or a
   * transient failure does, and never run a second time.
   */
  @Test
  void shouldFailACancelledJobWhoseAttemptLostTheDatabaseInsteadOfRunningItAgain()
      throws Exception {
    UUID uid = enqueue(Map.of("block", true, "fail_sqlstate", "57P01"));
    service.runOnce();
    assertThat(service.nextStarted()).isEqualTo(uid);
    assertThat(bulk.cancelJob(uid)).isEqualTo(CancelOutcome.STOP_REQUESTED);
    service.release(uid); // its attempt ends with the connection error before the owner's tick
    service.awaitReturned(uid);

    TickResult result = service.runOnce();
    service.awaitTasks(Duration.ofSeconds(5));

    assertThat(service.startOrder).as("it ran once").containsExactly(uid);
    assertThat(result.retried()).as("not put back").isZero();
    Job job = queue.getJob(uid).orElseThrow();
    assertThat(job.status).isEqualTo(JobStatus.FAILED);
    assertThat(job.error).isEqualTo("cancelled on request");
    assertThat(job.retryCount).isZero();
  }

  @Test
  void shouldPauseClaimingButLetWorkFinishWhileAConfirmationIsLate() throws Exception {
    settings.update("controlled", new SettingsOverride(null, 1, null, null));
    UUID first = enqueue(Map.of("block", true, "result", Map.of("n", 1)));
    UUID second = enqueue(Map.of());
    service.runOnce();
    service.nextStarted();

    lock.trust = Trust.FINISH;
    assertThat(service.supervise()).isNotNull();
    assertThat(service.interrupted).isEmpty();
    service.release(first);
    service.awaitReturned(first);
    TickResult late = (TickResult) service.supervise();

    assertThat(late.done()).as("finished work is written").isEqualTo(1);
    assertThat(late.claimed()).as("nothing new is claimed").isZero();
    assertThat(queue.getJob(second).orElseThrow().status).isEqualTo(JobStatus.PENDING);

    lock.trust = null;
    assertThat(service.runOnce().claimed()).isEqualTo(1);
  }

  @Test
  void shouldInterruptOnlyOnceTrustIsGoneAndThenPutTheJobBackWithoutARetry() throws Exception {
    UUID uid = enqueue(Map.of("block", true));
    service.runOnce();
    service.nextStarted();

    lock.trust = Trust.FINISH;
    service.supervise();
    assertThat(service.interrupted).isEmpty();

    lock.trust = Trust.NONE;
    service.supervise();
    service.awaitReturned(uid);
    assertThat(service.interrupted).containsExactly(uid);
    service.supervise();

    Job back = queue.getJob(uid).orElseThrow();
    assertThat(back.status).isEqualTo(JobStatus.PENDING);
    assertThat(back.retryCount).isZero();
    assertThat(service.inFlightCount()).isZero();
  }

  @Test
  void shouldWriteWhatFinishedBeforeTrustWasLost() throws Exception {
    UUID uid = enqueue(Map.of("block", true, "result", Map.of("ok", true)));
    service.runOnce();
    service.nextStarted();
    service.release(uid);
    service.awaitReturned(uid);

    lock.trust = Trust.NONE;
    service.supervise();

    assertThat(queue.getJob(uid).orElseThrow().status).isEqualTo(JobStatus.DONE);
    assertThat(service.inFlightCount()).isZero();
  }

  @Test
  void shouldNotRecoverAnEarlierOwnersRunningJobUntilItsTrustWindowHasPassed() {
    UUID uid = enqueue(Map.of());
    db.update(
        "UPDATE jobs SET status = 'running', started_at = now(), epoch = ? WHERE uid = ?",
        realLock.epoch() - 1,
        uid);

    lock.settled = false;
    assertThat(service.runOnce().requeued()).isZero();
    assertThat(queue.getJob(uid).orElseThrow().status).isEqualTo(JobStatus.RUNNING);

    lock.settled = true;
    assertThat(service.runOnce().requeued()).isEqualTo(1);
  }

  @Test
  void shouldStartNothingOnceANewerEpochWasTakenAndKnowItLostTheLock() throws Exception {
    enqueue(Map.of());
    long mine = realLock.epoch();
    long intruder;
    try (Connection c = db.dataSource().getConnection()) {
      intruder = Epochs.take(c, realLock.name(), "intruder");
    }
    assertThat(intruder).isGreaterThan(mine);

    TickResult result = service.runOnce();

    assertThat(result.claimed()).isZero();
    assertThat(realLock.trust()).as("the claim told the lock").isEqualTo(Trust.NONE);
    // The advisory lock is still this replica's, so it takes a newer epoch at its next attempt.
    awaitTrue(() -> realLock.isOwner() && realLock.epoch() > intruder, Duration.ofSeconds(10));
    assertThat(service.runOnce().claimed()).isEqualTo(1);
  }

  @Test
  void shouldKeepTheJobsItRunsWhenItTakesItsLockBackAfterItsSessionWasKilled() throws Exception {
    UUID uid = enqueue(Map.of("block", true, "result", Map.of("ok", true)));
    service.runOnce();
    service.nextStarted();
    long before = realLock.epoch();

    int killed =
        db.query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    + " WHERE application_name LIKE 'async-jobs:%'")
            .size();
    assertThat(killed).isEqualTo(1);
    awaitTrue(() -> realLock.isOwner() && realLock.epoch() > before, Duration.ofSeconds(10));

    double adoptedBefore = registry.counter("jobs.adopted", "kind", "controlled").count();
    TickResult adopted = service.runOnce();
    assertThat(adopted.adopted()).isEqualTo(1);
    assertThat(registry.counter("jobs.adopted", "kind", "controlled").count() - adoptedBefore)
        .isEqualTo(1);
    assertThat(service.interrupted).isEmpty();
    service.release(uid);
    service.awaitReturned(uid);
    TickResult done = service.runOnce();

    assertThat(done.done()).isEqualTo(1);
    Job job = queue.getJob(uid).orElseThrow();
    assertThat(job.status).isEqualTo(JobStatus.DONE);
    assertThat(job.epoch).isEqualTo(realLock.epoch());
    assertThat(job.retryCount).isZero();
    assertThat(service.startOrder).as("it ran once").containsExactly(uid);
  }

  /**
   * The adoption committed but its answer never came back (the connection broke on the way): the
   * row already carries the new epoch. The next run must see the job as its own, not as taken by
   * someone else, or it interrupts work that nobody else holds and leaves the row running.
   */
  @Test
  void shouldKeepAJobWhoseAdoptionCommittedButWhoseAnswerWasLost() throws Exception {
    UUID uid = enqueue(Map.of("block", true, "result", Map.of("ok", true)));
    service.runOnce();
    service.nextStarted();
    long before = realLock.epoch();
    db.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            + " WHERE application_name LIKE 'async-jobs:%'");
    awaitTrue(() -> realLock.isOwner() && realLock.epoch() > before, Duration.ofSeconds(10));
    db.update("UPDATE jobs SET epoch = ? WHERE uid = ?", realLock.epoch(), uid);

    assertThat(service.runOnce().adopted()).isEqualTo(1);
    assertThat(service.interrupted).isEmpty();
    service.release(uid);
    service.awaitReturned(uid);
    service.runOnce();

    Job job = queue.getJob(uid).orElseThrow();
    assertThat(job.status).isEqualTo(JobStatus.DONE);
    assertThat(job.retryCount).isZero();
    assertThat(service.startOrder).as("it ran once").containsExactly(uid);
  }

  /**
   * A job's guarded effect reads its epochs, then the owner's lock session is killed, the lock is
   * taken back and the job adopted under the new epoch before the effect's statement runs. The
   * statement misses (the row carries the new epoch now); the engine sees the epochs grew and
   * applies it again, so it lands although the job never left this replica.
   */
  @Test
  void shouldApplyAGuardedEffectAgainWhenItsJobWasAdoptedInBetween() throws Exception {
    UUID uid = enqueue(Map.of("guarded_effect", true));
    service.runOnce();
    service.guardReached();
    long claimedUnder = realLock.epoch();

    db.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            + " WHERE application_name LIKE 'async-jobs:%'");
    awaitTrue(() -> realLock.isOwner() && realLock.epoch() > claimedUnder, Duration.ofSeconds(10));
    long adoptedUnder = realLock.epoch();
    assertThat(service.runOnce().adopted()).isEqualTo(1);
    service.letGuardGoOn();
    service.awaitReturned(uid);
    service.runOnce();

    Job job = queue.getJob(uid).orElseThrow();
    assertThat(job.status).isEqualTo(JobStatus.DONE);
    assertThat(job.result).containsEntry("landed", true);
    assertThat(service.guardTries)
        .as("tried with the claim's epoch, then again once the adoption added its own")
        .containsExactly(List.of(claimedUnder), List.of(claimedUnder, adoptedUnder));
  }

  @Test
  void shouldFailACancelledJobAtHandoverInsteadOfRunningItAgain() throws Exception {
    UUID uid = enqueue(Map.of("block", true));
    service.runOnce();
    service.nextStarted();
    bulk.cancelJob(uid);

    try {
      manager.handOver(Duration.ofMillis(200));

      Job job = queue.getJob(uid).orElseThrow();
      assertThat(job.status).isEqualTo(JobStatus.FAILED);
      assertThat(job.error).isEqualTo("cancelled on request");
    } finally {
      manager.all().stream()
          .filter(JobService.class::isInstance)
          .forEach(s -> ((JobService) s).endDrain());
    }
  }

  @Test
  void shouldClaimAnAdminRetriedJobBeforeTheBacklogThatCameAfterIt() throws Exception {
    settings.update("controlled", new SettingsOverride(null, 1, null, null));
    UUID retried = enqueue(Map.of("fail", "once"));
    service.runOnce();
    assertThat(service.nextStarted()).isEqualTo(retried);
    service.awaitTasks(Duration.ofSeconds(5));
    service.runOnce();
    List<UUID> backlog =
        List.of(
            enqueue(Map.of("block", true)),
            enqueue(Map.of("block", true)),
            enqueue(Map.of("block", true)));
    service.wakeOnce(); // claims the first of the backlog, moving the wake-up cursor past it
    assertThat(service.nextStarted()).isEqualTo(backlog.get(0));

    assertThat(bulk.retryJob(retried)).isTrue();
    manager.wakeFor("controlled" + JobQueue.FROM_HEAD);
    service.release(backlog.get(0));
    service.awaitReturned(backlog.get(0));
    service.wakeOnce();

    assertThat(service.nextStarted()).as("the retried job goes first").isEqualTo(retried);
  }

  @Test
  void shouldAskForTheHeadOfTheQueueWhenAJobIsRetried() throws Exception {
    UUID uid = enqueue(Map.of("fail", "once"));
    service.runOnce();
    service.awaitTasks(Duration.ofSeconds(5));
    service.runOnce();
    try (Connection c = db.dataSource().getConnection();
        Statement s = c.createStatement()) {
      s.execute("LISTEN " + JobQueue.ENQUEUED_CHANNEL);
      assertThat(bulk.retryJob(uid)).isTrue();
      PGNotification[] notes = c.unwrap(PGConnection.class).getNotifications(5_000);
      assertThat(notes).extracting(PGNotification::getParameter).contains("controlled:head");
      s.execute("UNLISTEN *");
    }
  }

  private double putBack(String reason) {
    return registry.counter("jobs.put.back", "kind", "controlled", "reason", reason).count();
  }

  private UUID enqueue(Map<String, Object> payload) {
    return queue.enqueue("controlled", payload, null, null, null);
  }

  private static void awaitTrue(BooleanSupplier condition, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not met within " + timeout);
      }
      Thread.sleep(20);
    }
  }
}
