package io.asyncjobs.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agroal.api.AgroalDataSource;
import io.asyncjobs.channels.Notifier;
import io.asyncjobs.config.Shards;
import io.asyncjobs.lock.Epochs;
import io.asyncjobs.lock.OwnerLock;
import io.asyncjobs.operations.ServicePauses;
import io.asyncjobs.queue.EnqueueRequest;
import io.asyncjobs.queue.Enqueued;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobInserter;
import io.asyncjobs.queue.JobStatus;
import io.asyncjobs.queue.JobsEnqueued;
import io.asyncjobs.queue.Owner;
import io.asyncjobs.queue.QueueMetrics;
import io.asyncjobs.queue.QuotaAdmission;
import io.asyncjobs.settings.SettingsOverride;
import io.asyncjobs.testing.Intercepted;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.enterprise.event.Event;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * A single enqueue on the replica that owns the shard, with a thread free and nothing due waiting,
 * starts its job in its own commit ({@code jobs.start-on-enqueue}): the row is written running
 * under the owner's epoch and handed to a thread, with no claim. What a caller sees must stay what
 * a claim gives: FIFO (a job never starts before a due job that waits), max-concurrent, pauses, the
 * fence against a newer owner, and each job run once whatever fails between the insert and the
 * thread.
 */
@QuarkusTest
@TestProfile(StartOnEnqueueTest.On.class)
class StartOnEnqueueTest extends ControlledKindFixture {

  /** The shipped setting, which the test profile turns off. */
  public static class On implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of("jobs.start-on-enqueue", "true");
    }
  }

  private static final ExecutorService CALLERS = Executors.newCachedThreadPool();

  @Inject ServicePauses pauses;
  @Inject OwnerLock realLock;
  @Inject AgroalDataSource dataSource;
  @Inject Event<JobsEnqueued> enqueued;
  @Inject Shards shards;
  @Inject QuotaAdmission quota;
  @Inject Notifier notifier;

  @AfterAll
  static void stopCallers() {
    CALLERS.shutdownNow();
  }

  @Test
  void shouldStartAJobInItsOwnCommitWhenAThreadIsFreeAndNothingWaits() throws Exception {
    Enqueued job = queue.enqueue(request(Map.of("block", true, "result", Map.of("ok", true))));

    assertThat(job.status()).as("the enqueue's answer").isEqualTo(JobStatus.RUNNING);
    Job row = queue.getJob(job.uid()).orElseThrow();
    assertThat(row.status).isEqualTo(JobStatus.RUNNING);
    assertThat(row.epoch).isEqualTo(service.ownerLock().epoch());
    assertThat(row.startedAt).isEqualTo(T0);
    assertThat(service.nextStarted()).as("started with no run").isEqualTo(job.uid());

    TickResult tick = service.runOnce();
    assertThat(tick.claimed()).isZero();
    assertThat(tick.requeued()).as("the task holds it: no orphan").isZero();
    service.release(job.uid());
    service.awaitReturned(job.uid());
    service.runOnce();

    Job done = queue.getJob(job.uid()).orElseThrow();
    assertThat(done.status).isEqualTo(JobStatus.DONE);
    assertThat(done.result).containsEntry("ok", true);
    assertThat(done.retryCount).isZero();
    assertThat(service.startOrder).as("run once").containsExactly(job.uid());
  }

  @Test
  void shouldWriteAJobPendingWhenADueJobWaitsBeforeIt() throws Exception {
    settings.update("controlled", new SettingsOverride(null, 3, null, null));
    service.runOnce();
    // A batch is written pending: two due jobs wait, threads are free.
    List<Enqueued> older = queue.enqueue(List.of(request(Map.of()), request(Map.of())));
    assertThat(older).extracting(Enqueued::status).containsOnly(JobStatus.PENDING);

    Enqueued late = queue.enqueue(request(Map.of()));

    assertThat(late.status()).as("behind the due jobs").isEqualTo(JobStatus.PENDING);
    assertThat(service.startOrder).as("nothing jumped the queue").isEmpty();
    assertThat(service.runOnce().claimed()).isEqualTo(3);
    assertThat(service.awaitTasks(Duration.ofSeconds(5))).isTrue();
    service.runOnce();
    assertThat(count(JobStatus.DONE)).isEqualTo(3);
    assertThat(service.startOrder).doesNotHaveDuplicates().hasSize(3);
  }

  @Test
  void shouldWritePendingWhileEveryThreadIsBusyAndStartItAtTheNextClaim() throws Exception {
    settings.update("controlled", new SettingsOverride(null, 1, null, null));
    service.runOnce();
    Enqueued first = queue.enqueue(request(Map.of("block", true)));
    Enqueued second = queue.enqueue(request(Map.of("block", true)));

    assertThat(first.status()).isEqualTo(JobStatus.RUNNING);
    assertThat(second.status()).as("no thread free").isEqualTo(JobStatus.PENDING);
    assertThat(service.nextStarted()).isEqualTo(first.uid());
    service.release(first.uid());
    service.awaitReturned(first.uid());
    assertThat(service.runOnce().claimed()).isEqualTo(1);
    assertThat(service.nextStarted()).isEqualTo(second.uid());
    service.release(second.uid());
    service.awaitReturned(second.uid());
    service.runOnce();

    assertThat(service.startOrder).containsExactly(first.uid(), second.uid());
    assertThat(service.maxActive.get()).isEqualTo(1);
    assertThat(count(JobStatus.DONE)).isEqualTo(2);
  }

  @Test
  void shouldWritePendingWhileTheKindIsPaused() throws Exception {
    pauses.pause("controlled", "user:root", "maintenance");
    try {
      service.runOnce(); // reads the pause
      Enqueued job = queue.enqueue(request(Map.of()));

      assertThat(job.status()).isEqualTo(JobStatus.PENDING);
      assertThat(service.runOnce().claimed()).isZero();
      assertThat(service.startOrder).isEmpty();
    } finally {
      pauses.resume("controlled");
    }
    assertThat(service.runOnce().claimed()).isEqualTo(1);
  }

  @Test
  void shouldWritePendingWhenANewerEpochIsTakenWhileTheInsertWaitsAtTheFence() throws Exception {
    long intruder;
    Future<Enqueued> caller;
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      // A new owner takes the next epoch; its row stays locked until it commits, and the insert's
      // fence (FOR SHARE) waits for it.
      intruder = Epochs.take(c, realLock.name(), "intruder");
      caller = CALLERS.submit(() -> queue.enqueue(request(Map.of())));
      awaitTrue(this::insertWaitsForALock, Duration.ofSeconds(10));
      c.commit();
    }

    Enqueued job = caller.get(10, TimeUnit.SECONDS);

    assertThat(job.status()).as("fenced off: left to the newer owner").isEqualTo(JobStatus.PENDING);
    Job row = queue.getJob(job.uid()).orElseThrow();
    assertThat(row.status).isEqualTo(JobStatus.PENDING);
    assertThat(row.epoch).isNull();
    assertThat(row.startedAt).isNull();
    assertThat(service.startOrder).isEmpty();
    assertThat(service.inFlightCount()).isZero();
    // The real lock takes the shard back under a newer epoch, and claims the job once.
    awaitTrue(() -> realLock.isOwner() && realLock.epoch() > intruder, Duration.ofSeconds(10));
    assertThat(service.runOnce().claimed()).isEqualTo(1);
    assertThat(service.awaitTasks(Duration.ofSeconds(5))).isTrue();
    service.runOnce();
    assertThat(service.startOrder).containsExactly(job.uid());
  }

  @Test
  void shouldStartNothingAndLetTheRunGoOnWhenTheInsertsSessionIsTerminated() throws Exception {
    Future<Enqueued> caller;
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps =
          c.prepareStatement("SELECT 1 FROM job_owner_epochs WHERE epoch = ? FOR UPDATE")) {
        ps.setLong(1, service.ownerLock().epoch());
        ps.executeQuery().close();
      }
      caller = CALLERS.submit(() -> queue.enqueue(request(Map.of())));
      awaitTrue(this::insertWaitsForALock, Duration.ofSeconds(10));
      db.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
              + " WHERE query LIKE 'WITH v (uid%' AND pid <> pg_backend_pid()");
      Future<Enqueued> failed = caller;
      assertThatThrownBy(() -> failed.get(10, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class);
      c.rollback();
    }

    assertThat(count(JobStatus.PENDING) + count(JobStatus.RUNNING)).as("nothing went in").isZero();
    // The reservation was let go: a run goes on, and the next enqueue finds its thread free.
    Future<TickResult> run = CALLERS.submit(() -> service.runOnce());
    assertThat(run.get(10, TimeUnit.SECONDS).claimed()).isZero();
    Enqueued next = queue.enqueue(request(Map.of()));
    assertThat(next.status()).isEqualTo(JobStatus.RUNNING);
    assertThat(service.awaitTasks(Duration.ofSeconds(5))).isTrue();
    service.runOnce();
    assertThat(service.startOrder).containsExactly(next.uid());
  }

  @Test
  void shouldStartAJobWhoseStartingInsertCommittedButWhoseAnswerWasLost() throws Exception {
    JobInserter inserter = inserterLosing(false);

    Enqueued job =
        inserter.enqueue(List.of(request(Map.of("block", true, "result", Map.of("ok", 1))))).get(0);

    // The row was read back while the reservation held the shard: it starts as if answered.
    assertThat(job.status()).isEqualTo(JobStatus.RUNNING);
    assertThat(service.nextStarted()).isEqualTo(job.uid());
    TickResult run = service.runOnce();
    assertThat(run.requeued()).as("no orphan").isZero();
    assertThat(run.claimed()).isZero();
    service.release(job.uid());
    service.awaitReturned(job.uid());
    service.runOnce();

    Job done = queue.getJob(job.uid()).orElseThrow();
    assertThat(done.status).isEqualTo(JobStatus.DONE);
    assertThat(done.retryCount).as("no retry spent").isZero();
    assertThat(service.startOrder).as("run once").containsExactly(job.uid());
  }

  @Test
  void shouldRunOnceAJobLeftRunningWhenNeitherTheAnswerNorTheReadBackCame() throws Exception {
    JobInserter inserter = inserterLosing(true);

    assertThatThrownBy(() -> inserter.enqueue(List.of(request(Map.of("result", Map.of("ok", 1))))))
        .hasRootCauseMessage("the answer was lost");

    // The row went in running under the owner's epoch, but no thread took it.
    List<Map<String, Object>> rows =
        db.query("SELECT uid, status, epoch FROM jobs WHERE kind = 'controlled'");
    assertThat(rows).hasSize(1);
    assertThat(rows.get(0)).containsEntry("status", "running");
    assertThat(((Number) rows.get(0).get("epoch")).longValue())
        .isEqualTo(service.ownerLock().epoch());
    UUID uid = (UUID) rows.get(0).get("uid");
    assertThat(service.inFlightCount()).isZero();
    assertThat(service.startOrder).isEmpty();

    // The owner's next run finds it running with no task (its orphan), puts it back, claims it.
    TickResult run = service.runOnce();
    assertThat(run.requeued()).isEqualTo(1);
    assertThat(run.claimed()).isEqualTo(1);
    assertThat(service.awaitTasks(Duration.ofSeconds(5))).isTrue();
    service.runOnce();

    Job job = queue.getJob(uid).orElseThrow();
    assertThat(job.status).isEqualTo(JobStatus.DONE);
    assertThat(service.startOrder).as("run once").containsExactly(uid);
  }

  @Test
  void shouldLeaveTurnsRunningQuotasAndDelaysToTheClaim() throws Exception {
    settings.update("controlled", new SettingsOverride(null, 4, null, null, "fair", null, null));
    service.runOnce();
    assertThat(queue.enqueue(request(Map.of())).status()).as("fair").isEqualTo(JobStatus.PENDING);
    settings.update("controlled", new SettingsOverride(null, 4, null, null, "fifo", null, 1));
    service.runOnce();
    assertThat(queue.enqueue(request(Map.of())).status())
        .as("under a running quota")
        .isEqualTo(JobStatus.PENDING);
    settings.update("controlled", new SettingsOverride(null, 4, null, null));
    service.runOnce(); // claims the two
    assertThat(service.awaitTasks(Duration.ofSeconds(5))).isTrue();
    service.runOnce();
    Enqueued later = queue.enqueue(request(Map.of()).withRunAfter(T0.plusSeconds(60)));
    assertThat(later.status()).as("delayed").isEqualTo(JobStatus.PENDING);
    assertThat(queue.getJob(later.uid()).orElseThrow().delayedUntil).isEqualTo(T0.plusSeconds(60));

    assertThat(service.startOrder).hasSize(2).doesNotContain(later.uid());
  }

  @Test
  void shouldWriteWhatTheCallerAskedForOnAJobItStarts() throws Exception {
    String traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    Enqueued job =
        queue.enqueue(
            request(Map.of("n", 7))
                .withPriority(3)
                .withRunAfter(T0.minusSeconds(5))
                .withPreferredName("report.zip")
                .withCallbackUrl("https://hooks.example/done")
                .withTraceparent(traceparent));

    assertThat(job.status()).as("due: its time has come").isEqualTo(JobStatus.RUNNING);
    Job row = queue.getJob(job.uid()).orElseThrow();
    assertThat(row.priority).isEqualTo(3);
    assertThat(row.runAfter).isEqualTo(T0.minusSeconds(5));
    assertThat(row.delayedUntil).isNull();
    assertThat(row.preferredName).isEqualTo("report.zip");
    assertThat(row.callbackUrl).isEqualTo("https://hooks.example/done");
    assertThat(row.traceparent).isEqualTo(traceparent);
    assertThat(row.payload).containsEntry("n", 7);
    assertThat(row.ownerKind).isEqualTo("user");
    assertThat(row.ownerId).isEqualTo("tester");
    assertThat(row.expiresAt).isAfter(T0);
    assertThat(service.awaitTasks(Duration.ofSeconds(5))).isTrue();
    service.runOnce();
    assertThat(service.startOrder).containsExactly(job.uid());
  }

  /**
   * An inserter whose starting insert commits and then loses its answer, and, with {@code
   * readBackToo}, whose read of the row after that fails as well.
   */
  private JobInserter inserterLosing(boolean readBackToo) {
    return new JobInserter(
        settings,
        clock,
        answersLost(dataSource, readBackToo),
        enqueued,
        QueueMetrics.NONE,
        shards,
        quota,
        manager,
        manager,
        notifier);
  }

  private static EnqueueRequest request(Map<String, Object> payload) {
    return EnqueueRequest.of("controlled", new Owner("user", "tester"), payload);
  }

  private long count(JobStatus status) {
    return ((Number)
            db.query(
                    "SELECT count(*) AS n FROM jobs WHERE kind = 'controlled' AND status = ?",
                    status.dbValue())
                .get(0)
                .get("n"))
        .longValue();
  }

  /** Whether the starting insert waits for a row lock (the fence's FOR SHARE). */
  private boolean insertWaitsForALock() {
    return !db.query(
            "SELECT 1 FROM pg_stat_activity WHERE query LIKE 'WITH v (uid%'"
                + " AND wait_event_type = 'Lock'")
        .isEmpty();
  }

  private static void awaitTrue(BooleanSupplier condition, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("waited %s", timeout).isLessThan(deadline);
      Thread.sleep(10);
    }
  }

  /**
   * A data source whose starting insert (JobInsertOneStarted) runs and commits, and then loses its
   * answer, as when the connection drops between the commit and the reply; with {@code
   * readBackToo}, the read of a job's row by uid fails the same way.
   */
  private static AgroalDataSource answersLost(AgroalDataSource real, boolean readBackToo) {
    return Intercepted.statements(
        real,
        (sql, ps) ->
            sql.startsWith("WITH v (uid")
                    || (readBackToo && sql.endsWith("FROM jobs WHERE uid = ?"))
                ? Intercepted.wrap(
                    PreparedStatement.class,
                    ps,
                    (method, args, result) -> {
                      if (method.getName().equals("executeQuery")) {
                        throw new SQLException("the answer was lost", "08006");
                      }
                      return result;
                    })
                : ps);
  }
}
