package io.asyncjobs.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.asyncjobs.config.Shards;
import io.asyncjobs.queue.CancelOutcome;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobStatus;
import io.asyncjobs.settings.SettingsOverride;
import io.quarkus.test.junit.QuarkusTest;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

@QuarkusTest
class JobServiceTest extends ControlledKindFixture {

  private static final Duration SEVEN_DAYS = Duration.ofDays(7);

  @Test
  void shouldProcessJobsInEnqueueOrderAcrossTicks() throws Exception {
    settings.update("controlled", new SettingsOverride(null, 2, null, null));
    List<UUID> enqueued = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      enqueued.add(enqueue(Map.of("block", true)));
    }

    List<UUID> startedInOrder = new ArrayList<>();
    for (int tick = 0; tick < 3; tick++) {
      TickResult result = service.runOnce();
      assertThat(result.claimed()).isEqualTo(2);
      List<UUID> batch = List.of(service.nextStarted(), service.nextStarted());
      // Two threads start in either order; the claim took the two oldest.
      assertThat(batch)
          .containsExactlyInAnyOrderElementsOf(enqueued.subList(tick * 2, tick * 2 + 2));
      startedInOrder.addAll(enqueued.subList(tick * 2, tick * 2 + 2));
      batch.forEach(service::release);
      assertThat(service.awaitTasks(Duration.ofSeconds(5))).isTrue();
    }
    assertThat(service.runOnce().done()).isEqualTo(2);
    assertThat(startedInOrder).containsExactlyElementsOf(enqueued);
    assertThat(statuses()).containsOnly(JobStatus.DONE);
  }

  @Test
  void shouldNeverRunMoreJobsAtOnceThanMaxConcurrent() throws Exception {
    settings.update("controlled", new SettingsOverride(null, 3, null, null));
    List<UUID> jobs = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      jobs.add(enqueue(Map.of("block", true)));
    }

    assertThat(service.runOnce().claimed()).isEqualTo(3);
    assertThat(service.runOnce().claimed()).isZero();
    for (int i = 0; i < 3; i++) {
      service.nextStarted();
    }
    assertThat(service.active.get()).isEqualTo(3);
    int done = 0;
    while (done < jobs.size()) {
      UUID next = jobs.get(done);
      service.release(next);
      service.awaitReturned(next);
      TickResult result = service.runOnce();
      done += result.done();
      assertThat(service.active.get()).isLessThanOrEqualTo(3);
    }
    assertThat(service.maxActive.get()).isEqualTo(3);
    assertThat(countByStatus(JobStatus.DONE)).isEqualTo(10);
  }

  @Test
  void shouldWriteResultTimingAndStatColumnsWhenReaped() throws Exception {
    Map<String, Object> result =
        Map.of(
            "download_url",
            "/api/jobs/x/download",
            "bytes_in",
            1200,
            "bytes_out",
            800L,
            "item_count",
            3);
    UUID uid = enqueue(Map.of("block", true, "result", result));
    service.runOnce();
    service.nextStarted();
    clock.advance(Duration.ofMillis(2500));
    service.release(uid);
    assertThat(service.awaitTasks(Duration.ofSeconds(5))).isTrue();
    clock.advance(Duration.ofSeconds(1)); // the tick that reaps comes later

    TickResult tick = service.runOnce();

    assertThat(tick.done()).isEqualTo(1);
    Job job = queue.getJob(uid).orElseThrow();
    assertThat(job.status).isEqualTo(JobStatus.DONE);
    assertThat(job.result).containsEntry("download_url", "/api/jobs/x/download");
    assertThat(job.result).containsEntry("bytes_in", 1200);
    assertThat(job.bytesIn).isEqualTo(1200L);
    assertThat(job.bytesOut).isEqualTo(800L);
    assertThat(job.itemCount).isEqualTo(3L);
    assertThat(job.error).isNull();
    assertThat(job.startedAt).isEqualTo(T0);
    assertThat(job.completedAt).isEqualTo(T0.plusMillis(2500));
    assertThat(job.durationMs).isEqualTo(2500L);
    assertThat(job.updatedAt).isEqualTo(T0.plusMillis(2500));
    // Retention restarts when the job finishes.
    assertThat(job.expiresAt).isEqualTo(T0.plusMillis(2500).plus(SEVEN_DAYS));
  }

  @Test
  void shouldFailAJobThatThrowsWithTypeAndMessageOnly() throws Exception {
    UUID uid = enqueue(Map.of("fail", "disk full"));
    service.runOnce();
    assertThat(service.awaitTasks(Duration.ofSeconds(5))).isTrue();

    assertThat(service.runOnce().failed()).isEqualTo(1);

    Job job = queue.getJob(uid).orElseThrow();
    assertThat(job.status).isEqualTo(JobStatus.FAILED);
    assertThat(job.error).isEqualTo("IllegalStateException: disk full");
    assertThat(job.result).isNull();
    assertThat(job.completedAt).isEqualTo(T0);
    assertThat(job.retryCount).isZero();
  }

  @Test
  void shouldInterruptAndFailAJobThatRunsPastItsTimeout() throws Exception {
    settings.update("controlled", new SettingsOverride(null, null, 5L, null));
    UUID uid = enqueue(Map.of("block", true));
    service.runOnce();
    service.nextStarted();

    clock.advance(Duration.ofSeconds(5));
    assertThat(service.runOnce().timedOut()).as("not yet past the timeout").isZero();
    clock.advance(Duration.ofSeconds(1));
    TickResult tick = service.runOnce();

    assertThat(tick.timedOut()).isEqualTo(1);
    assertThat(tick.failed()).isEqualTo(1);
    Job job = queue.getJob(uid).orElseThrow();
    assertThat(job.status).isEqualTo(JobStatus.FAILED);
    assertThat(job.error).isEqualTo("timed out after 5 s");
    assertThat(job.durationMs).isEqualTo(6000L);
    service.awaitReturned(uid);
    assertThat(service.interrupted).contains(uid);
  }

  @Test
  void shouldKeepATimedOutJobsSlotUntilItsThreadReturns() throws Exception {
    settings.update("controlled", new SettingsOverride(null, 1, 5L, null));
    UUID stubborn = enqueue(Map.of("block", true, "ignore_interrupt", true));
    UUID next = enqueue(Map.of());
    service.runOnce();
    service.nextStarted();
    clock.advance(Duration.ofSeconds(6));

    TickResult tick = service.runOnce();

    assertThat(tick.timedOut()).isEqualTo(1);
    assertThat(tick.claimed()).as("the stubborn thread still holds the only slot").isZero();
    assertThat(queue.getJob(stubborn).orElseThrow().status).isEqualTo(JobStatus.FAILED);
    service.release(stubborn);
    service.awaitReturned(stubborn);
    assertThat(service.runOnce().claimed()).isEqualTo(1);
    assertThat(service.nextStarted()).isEqualTo(next);
  }

  @Test
  void shouldRequeueAnOrphanWithOneMoreRetry() {
    UUID orphan = insertRunning(0, 1L);

    TickResult tick = service.runOnce();

    assertThat(tick.requeued()).isEqualTo(1);
    assertThat(tick.claimed()).as("claimed again in the same run").isEqualTo(1);
    Map<String, Object> row = row(orphan);
    assertThat(row.get("retry_count")).isEqualTo(1);
    assertThat(row.get("epoch")).isEqualTo(epoch());
  }

  @Test
  void shouldFailAnOrphanThatUsedUpItsRetries() {
    settings.update("controlled", new SettingsOverride(null, null, null, 2));
    UUID orphan = insertRunning(2, 1L);

    TickResult tick = service.runOnce();

    assertThat(tick.abandoned()).isEqualTo(1);
    Job job = queue.getJob(orphan).orElseThrow();
    assertThat(job.status).isEqualTo(JobStatus.FAILED);
    assertThat(job.retryCount).isEqualTo(2);
    assertThat(job.error).isEqualTo("abandoned: its processor vanished 3 times (max-retries 2)");
    assertThat(job.completedAt).isEqualTo(T0);
    assertThat(job.expiresAt).isEqualTo(T0.plus(SEVEN_DAYS));
  }

  @Test
  void shouldNotTouchRunningJobsOfANewerOwner() {
    UUID newer = insertRunning(0, epoch() + 1);

    TickResult tick = service.runOnce();

    assertThat(tick.requeued() + tick.abandoned()).isZero();
    assertThat(row(newer).get("status")).isEqualTo("running");
  }

  @Test
  void shouldNotWriteAnOutcomeUnderAStaleEpoch() throws Exception {
    UUID uid = enqueue(Map.of("block", true, "result", Map.of("x", 1)));
    service.runOnce();
    service.nextStarted();
    // A newer owner recovered the job and claimed it under its own epoch meanwhile.
    db.update("UPDATE jobs SET epoch = ? WHERE uid = ?", epoch() + 1, uid);
    service.release(uid);
    assertThat(service.awaitTasks(Duration.ofSeconds(5))).isTrue();

    TickResult tick = service.runOnce();

    assertThat(tick.fenced()).isEqualTo(1);
    assertThat(tick.done()).isZero();
    Map<String, Object> row = row(uid);
    assertThat(row.get("status")).isEqualTo("running");
    assertThat(row.get("result")).isNull();
    assertThat(row.get("epoch")).isEqualTo(epoch() + 1);
  }

  @Test
  void shouldCallCleanupBeforeDeletingOnlyExpiredFinishedJobs() throws Exception {
    settings.update("controlled", new SettingsOverride(null, 1, null, null));
    UUID expiredRunning = enqueue(Map.of("block", true));
    service.runOnce();
    service.nextStarted();
    db.update(
        "UPDATE jobs SET expires_at = ? WHERE uid = ?", ts(T0.minusSeconds(60)), expiredRunning);
    // The only slot is taken, so this pending job stays pending through the next run.
    UUID expiredPending = enqueue(Map.of());
    db.update(
        "UPDATE jobs SET expires_at = ? WHERE uid = ?", ts(T0.minusSeconds(60)), expiredPending);
    UUID expiredDone = insertFinished("done", T0.minusSeconds(1));
    UUID expiredFailed = insertFinished("failed", T0.minusSeconds(60));
    UUID fresh = insertFinished("done", T0.plusSeconds(60));
    List<Boolean> rowPresentDuringCleanup = new ArrayList<>();
    service.cleanupObserver = job -> rowPresentDuringCleanup.add(queue.getJob(job.uid).isPresent());

    TickResult tick = service.runOnce();

    assertThat(tick.swept()).isEqualTo(2);
    assertThat(service.cleanups).containsExactly(expiredFailed, expiredDone);
    assertThat(rowPresentDuringCleanup).containsExactly(true, true);
    assertThat(queue.getJob(expiredDone)).isEmpty();
    assertThat(queue.getJob(expiredFailed)).isEmpty();
    assertThat(queue.getJob(fresh)).isPresent();
    assertThat(queue.getJob(expiredPending).orElseThrow().status).isEqualTo(JobStatus.PENDING);
    assertThat(queue.getJob(expiredRunning).orElseThrow().status).isEqualTo(JobStatus.RUNNING);
  }

  @Test
  void shouldKeepAJobWhoseCleanupFailsAndRetryLater() {
    UUID broken = insertFinished("done", T0.minusSeconds(1));
    UUID fine = insertFinished("done", T0.minusSeconds(1));
    service.failingCleanups.add(broken);

    TickResult tick = service.runOnce();

    assertThat(tick.swept()).isEqualTo(1);
    assertThat(tick.cleanupErrors()).isEqualTo(1);
    assertThat(queue.getJob(fine)).isEmpty();
    Job kept = queue.getJob(broken).orElseThrow();
    assertThat(kept.expiresAt).isEqualTo(T0.plus(Duration.ofMinutes(5)));

    service.failingCleanups.clear();
    assertThat(service.runOnce().swept()).as("not before the retry delay").isZero();
    clock.advance(Duration.ofMinutes(5));
    assertThat(service.runOnce().swept()).isEqualTo(1);
    assertThat(queue.getJob(broken)).isEmpty();
  }

  @Test
  void shouldApplyASettingsChangeOnTheNextTick() throws Exception {
    settings.update("controlled", new SettingsOverride(null, 1, null, null));
    for (int i = 0; i < 5; i++) {
      enqueue(Map.of("block", true));
    }
    assertThat(service.runOnce().claimed()).isEqualTo(1);

    settings.update("controlled", new SettingsOverride(null, 4, null, null));

    assertThat(service.runOnce().claimed()).isEqualTo(3);
    for (int i = 0; i < 4; i++) {
      service.nextStarted();
    }
    assertThat(service.active.get()).isEqualTo(4);
  }

  @Test
  void shouldUseTheRetentionSettingWhenAJobFinishes() throws Exception {
    settings.update("controlled", new SettingsOverride(60L, null, null, null));
    UUID uid = enqueue(Map.of());
    service.runOnce();
    assertThat(service.awaitTasks(Duration.ofSeconds(5))).isTrue();

    service.runOnce();

    assertThat(queue.getJob(uid).orElseThrow().expiresAt).isEqualTo(T0.plusSeconds(60));
  }

  @Test
  void shouldReapAndRefillInOneStatementOnAWakeUp() throws Exception {
    settings.update("controlled", new SettingsOverride(null, 2, null, null));
    List<UUID> jobs = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      jobs.add(enqueue(Map.of("result", Map.of("i", i))));
    }
    assertThat(service.runOnce().claimed()).isEqualTo(2);
    assertThat(service.awaitTasks(Duration.ofSeconds(5))).isTrue();

    TickResult wake = service.wakeOnce();

    assertThat(wake.done()).isEqualTo(2);
    assertThat(wake.claimed()).isEqualTo(2);
    assertThat(queue.getJob(jobs.get(0)).orElseThrow().result).containsEntry("i", 0);
    assertThat(queue.getJob(jobs.get(1)).orElseThrow().status).isEqualTo(JobStatus.DONE);
    assertThat(queue.getJob(jobs.get(2)).orElseThrow().status).isEqualTo(JobStatus.RUNNING);
    assertThat(queue.getJob(jobs.get(3)).orElseThrow().status).isEqualTo(JobStatus.RUNNING);
    assertThat(queue.getJob(jobs.get(4)).orElseThrow().status).isEqualTo(JobStatus.PENDING);
  }

  @Test
  void shouldWriteManyOutcomesBesideTheClaimOnAWakeUp() throws Exception {
    int threads = Refiller.SIDE_WRITE_MIN + 6;
    settings.update("controlled", new SettingsOverride(null, threads, null, null));
    List<UUID> jobs = new ArrayList<>();
    for (int i = 0; i < 2 * threads + 5; i++) {
      jobs.add(enqueue(Map.of("result", Map.of("i", i))));
    }
    assertThat(service.runOnce().claimed()).isEqualTo(threads);
    assertThat(service.awaitTasks(Duration.ofSeconds(5))).isTrue();

    TickResult wake = service.wakeOnce();

    assertThat(wake.done()).isEqualTo(threads);
    assertThat(wake.claimed()).isEqualTo(threads);
    assertThat(service.inFlightCount()).as("the written tasks left the books").isEqualTo(threads);
    for (int i = 0; i < threads; i++) {
      Job job = queue.getJob(jobs.get(i)).orElseThrow();
      assertThat(job.status).isEqualTo(JobStatus.DONE);
      assertThat(job.result).containsEntry("i", i);
    }
    for (int i = threads; i < 2 * threads; i++) {
      assertThat(queue.getJob(jobs.get(i)).orElseThrow().status).isEqualTo(JobStatus.RUNNING);
    }
    assertThat(countByStatus(JobStatus.PENDING)).isEqualTo(5);

    assertThat(service.awaitTasks(Duration.ofSeconds(5))).isTrue();
    assertThat(service.wakeOnce().done()).isEqualTo(threads);
    assertThat(service.awaitTasks(Duration.ofSeconds(5))).isTrue();
    service.runOnce();
    assertThat(countByStatus(JobStatus.DONE)).isEqualTo(jobs.size());
    assertThat(service.startOrder).as("each ran once").doesNotHaveDuplicates().hasSize(jobs.size());
  }

  @Test
  void shouldFenceAStaleOutcomeOnAWakeUpToo() throws Exception {
    UUID uid = enqueue(Map.of("block", true));
    service.runOnce();
    service.nextStarted();
    db.update("UPDATE jobs SET epoch = ? WHERE uid = ?", epoch() + 1, uid);
    service.release(uid);
    service.awaitReturned(uid);

    TickResult wake = service.wakeOnce();

    assertThat(wake.fenced()).isEqualTo(1);
    assertThat(row(uid).get("status")).isEqualTo("running");
  }

  @Test
  void shouldInterruptRunningJobsAndPutThemBackWhenOwnershipIsLost() throws Exception {
    UUID uid = enqueue(Map.of("block", true));
    service.runOnce();
    service.nextStarted();

    service.whenNotOwner();
    service.awaitReturned(uid);
    assertThat(service.interrupted).contains(uid);
    // Once its thread has returned, the job goes back to pending, without a retry: it never
    // finished, and nobody else ran it.
    service.whenNotOwner();

    assertThat(service.inFlightCount()).isZero();
    Job back = queue.getJob(uid).orElseThrow();
    assertThat(back.status).isEqualTo(JobStatus.PENDING);
    assertThat(back.retryCount).isZero();
  }

  @Test
  void shouldHandRunningJobsBackWithoutARetryOnGracefulHandover() throws Exception {
    UUID finishing = enqueue(Map.of("block", true, "result", Map.of("ok", true)));
    UUID stuck = enqueue(Map.of("block", true));
    UUID waiting = enqueue(Map.of());
    settings.update("controlled", new SettingsOverride(null, 2, null, null));
    assertThat(service.runOnce().claimed()).isEqualTo(2);
    service.nextStarted();
    service.nextStarted();
    service.release(finishing);

    int released = manager.handOver(Duration.ofMillis(300));

    try {
      assertThat(released).isEqualTo(1);
      assertThat(queue.getJob(finishing).orElseThrow().status).isEqualTo(JobStatus.DONE);
      Job back = queue.getJob(stuck).orElseThrow();
      assertThat(back.status).isEqualTo(JobStatus.PENDING);
      assertThat(back.retryCount).isZero();
      assertThat(back.startedAt).isNull();
      assertThat(queue.getJob(waiting).orElseThrow().status).isEqualTo(JobStatus.PENDING);
      assertThat(service.runOnce().claimed()).as("draining: nothing new is claimed").isZero();
    } finally {
      manager.all().stream()
          .filter(JobService.class::isInstance)
          .forEach(s -> ((JobService) s).endDrain());
    }
  }

  @Test
  void shouldWriteReportedProgressWithTheNextTick() throws Exception {
    UUID uid = enqueue(Map.of("block", true, "progress", 0.5));
    service.runOnce();
    service.nextStarted();

    service.runOnce();

    Job job = queue.getJob(uid).orElseThrow();
    assertThat(job.progress).isEqualTo(0.5);
    assertThat(job.progressItems).isEqualTo(5L);
    assertThat(job.progressAt).isEqualTo(T0);
  }

  @Test
  void shouldWriteProgressAtMostOnceASecondPerJob() throws Exception {
    UUID uid = enqueue(Map.of("block", true, "progress_steps", List.of(0.25, 0.5, 0.75)));
    service.runOnce();
    service.nextStarted();

    service.step(uid);
    service.runOnce();
    assertThat(queue.getJob(uid).orElseThrow().progress).isEqualTo(0.25);

    service.step(uid);
    clock.advance(Duration.ofMillis(400));
    service.runOnce();
    assertThat(queue.getJob(uid).orElseThrow().progress).as("within the second").isEqualTo(0.25);

    service.step(uid);
    clock.advance(Duration.ofMillis(600));
    service.runOnce();
    Job job = queue.getJob(uid).orElseThrow();
    assertThat(job.progress).as("the latest report, once the second passed").isEqualTo(0.75);
    assertThat(job.progressAt).isEqualTo(T0.plusSeconds(1));
  }

  @Test
  void shouldIgnoreProgressReportedOutsideProcessAndRejectOutOfRangeFractions() {
    service.reportFromOutside(0.3); // no job on this thread: nothing to report against
    assertThatThrownBy(() -> service.reportFromOutside(1.5))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void shouldFailACancelledPendingJobWithoutRunningIt() {
    UUID uid = enqueue(Map.of());

    assertThat(bulk.cancelJob(uid)).isEqualTo(CancelOutcome.CANCELLED);

    assertThat(service.runOnce().claimed()).isZero();
    Job job = queue.getJob(uid).orElseThrow();
    assertThat(job.status).isEqualTo(JobStatus.FAILED);
    assertThat(job.error).isEqualTo("cancelled on request");
    assertThat(job.completedAt).isEqualTo(T0);
    assertThat(job.expiresAt).isEqualTo(T0.plus(SEVEN_DAYS));
    assertThat(service.startOrder).isEmpty();
  }

  @Test
  void shouldInterruptAndFailARunningJobAskedToStopOnTheNextTick() throws Exception {
    UUID uid = enqueue(Map.of("block", true));
    service.runOnce();
    service.nextStarted();

    assertThat(bulk.cancelJob(uid)).isEqualTo(CancelOutcome.STOP_REQUESTED);
    assertThat(queue.getJob(uid).orElseThrow().status).isEqualTo(JobStatus.RUNNING);

    TickResult tick = service.runOnce();

    assertThat(tick.failed()).isEqualTo(1);
    Job job = queue.getJob(uid).orElseThrow();
    assertThat(job.status).isEqualTo(JobStatus.FAILED);
    assertThat(job.error).isEqualTo("cancelled on request");
    service.awaitReturned(uid);
    assertThat(service.interrupted).contains(uid);
  }

  @Test
  void shouldFailAnOrphanThatWasAskedToStopInsteadOfRetryingIt() {
    UUID orphan = insertRunning(0, 1L);
    db.update("UPDATE jobs SET cancel_requested = true WHERE uid = ?", orphan);

    TickResult tick = service.runOnce();

    assertThat(tick.abandoned()).isEqualTo(1);
    Job job = queue.getJob(orphan).orElseThrow();
    assertThat(job.status).isEqualTo(JobStatus.FAILED);
    assertThat(job.error).isEqualTo("cancelled on request");
    assertThat(job.retryCount).isZero();
  }

  @Test
  void shouldLeaveARunningJobOfAnotherShardToThatShardsOwner() {
    UUID own = insertRunning(0, 1L);
    UUID other = insertRunning(0, 1L);
    db.update("UPDATE jobs SET shard = 'controlled-1' WHERE uid = ?", other);

    TickResult tick = service.runOnce();

    assertThat(tick.requeued()).as("only the row of this service's shard").isEqualTo(1);
    assertThat(row(own).get("retry_count")).isEqualTo(1);
    Map<String, Object> untouched = row(other);
    assertThat(untouched.get("status")).isEqualTo("running");
    assertThat(untouched.get("retry_count")).isEqualTo(0);
    assertThat(untouched.get("epoch")).isEqualTo(1L);
  }

  @Test
  void shouldClaimNoPendingJobOfAnotherShard() throws Exception {
    UUID other = enqueue(Map.of());
    db.update("UPDATE jobs SET shard = 'controlled-1' WHERE uid = ?", other);
    UUID own = enqueue(Map.of());

    TickResult tick = service.runOnce();

    assertThat(tick.claimed()).isEqualTo(1);
    assertThat(service.awaitTasks(Duration.ofSeconds(5))).isTrue();
    service.runOnce();
    assertThat(queue.getJob(own).orElseThrow().status).isEqualTo(JobStatus.DONE);
    assertThat(queue.getJob(other).orElseThrow().status).isEqualTo(JobStatus.PENDING);
  }

  @Test
  void shouldEnqueueIntoTheOneShardAndTakeEpochsThatSayTheyKnowShards() {
    UUID uid = enqueue(Map.of());

    assertThat(row(uid).get("shard")).isEqualTo(Shards.ALL);
    Map<String, Object> holding =
        db.query(
                "SELECT epoch, shard_aware_epoch FROM job_owner_epochs WHERE lock_name = ?",
                service.ownerLock().name())
            .get(0);
    assertThat(holding.get("epoch")).isEqualTo(epoch());
    assertThat(holding.get("shard_aware_epoch")).isEqualTo(epoch());
  }

  @Test
  void shouldLeaveFinishedAndUnknownJobsAloneWhenCancelled() throws Exception {
    UUID uid = enqueue(Map.of());
    service.runOnce();
    assertThat(service.awaitTasks(Duration.ofSeconds(5))).isTrue();
    service.runOnce();

    assertThat(bulk.cancelJob(uid)).isEqualTo(CancelOutcome.ALREADY_FINISHED);
    assertThat(queue.getJob(uid).orElseThrow().status).isEqualTo(JobStatus.DONE);
    assertThat(bulk.cancelJob(UUID.randomUUID())).isEqualTo(CancelOutcome.NOT_FOUND);
  }

  // ---- helpers ---------------------------------------------------------------------------

  private long epoch() {
    return service.ownerLock().epoch();
  }

  private UUID insertRunning(int retryCount, long epoch) {
    UUID uid = insertWithStatus("running", T0.plus(SEVEN_DAYS));
    db.update(
        "UPDATE jobs SET retry_count = ?, epoch = ?, started_at = ? WHERE uid = ?",
        retryCount,
        epoch,
        ts(T0.minusSeconds(30)),
        uid);
    return uid;
  }

  private UUID insertFinished(String status, Instant expiresAt) {
    UUID uid = insertWithStatus(status, expiresAt);
    db.update("UPDATE jobs SET completed_at = ? WHERE uid = ?", ts(T0.minusSeconds(3600)), uid);
    return uid;
  }

  private UUID insertWithStatus(String status, Instant expiresAt) {
    UUID uid = queue.enqueue("controlled", Map.of(), null, null, null);
    db.update(
        "UPDATE jobs SET status = ?, expires_at = ? WHERE uid = ?", status, ts(expiresAt), uid);
    return uid;
  }

  private Map<String, Object> row(UUID uid) {
    return db.query("SELECT * FROM jobs WHERE uid = ?", uid).get(0);
  }

  private List<JobStatus> statuses() {
    return db.query("SELECT status FROM jobs").stream()
        .map(r -> JobStatus.fromDbValue((String) r.get("status")).orElseThrow())
        .toList();
  }

  private long countByStatus(JobStatus status) {
    return statuses().stream().filter(status::equals).count();
  }

  private static Timestamp ts(Instant instant) {
    return Timestamp.from(instant);
  }
}
