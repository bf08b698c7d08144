package io.asyncjobs.kinds.noop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.asyncjobs.files.Trees;
import io.asyncjobs.lock.OwnerLock;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobQueue;
import io.asyncjobs.queue.JobStatus;
import io.asyncjobs.storage.DataDirectory;
import io.asyncjobs.testing.Database;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

@QuarkusTest
class NoopServiceTest {

  @Inject NoopService noop;
  @Inject JobQueue queue;
  @Inject Database db;
  @Inject DataDirectory data;
  @Inject OwnerLock lock;

  @Test
  void shouldSucceedSleepOrFailAsThePayloadSays() throws Exception {
    db.clearJobs();
    UUID quick = queue.enqueue("noop", Map.of(), null, null, null);
    UUID sleepy = queue.enqueue("noop", Map.of("sleep_ms", 30), null, null, null);
    UUID failing = queue.enqueue("noop", Map.of("fail", "as asked"), null, null, null);

    assertThat(noop.runOnce().claimed()).isEqualTo(3);
    assertThat(noop.awaitTasks(Duration.ofSeconds(5))).isTrue();
    noop.runOnce();

    Job quickJob = queue.getJob(quick).orElseThrow();
    assertThat(quickJob.status).isEqualTo(JobStatus.DONE);
    assertThat(quickJob.result).containsEntry("slept_ms", 0);
    assertThat(quickJob.itemCount).isEqualTo(1L);
    Job sleepyJob = queue.getJob(sleepy).orElseThrow();
    assertThat(sleepyJob.status).isEqualTo(JobStatus.DONE);
    assertThat(sleepyJob.result).containsEntry("slept_ms", 30);
    Job failedJob = queue.getJob(failing).orElseThrow();
    assertThat(failedJob.status).isEqualTo(JobStatus.FAILED);
    assertThat(failedJob.error).isEqualTo("IllegalStateException: as asked");
  }

  @Test
  void shouldRecordAnExecutionOnlyWhileItsEpochStillHoldsTheJob() throws Exception {
    db.clearJobs();
    db.update("DELETE FROM noop_executions");
    UUID kept = queue.enqueue("noop", Map.of("record", true), null, null, null);
    UUID fenced = queue.enqueue("noop", Map.of("record", true, "sleep_ms", 300), null, null, null);

    noop.runOnce();
    // While the second one sleeps, a newer owner takes it over.
    db.update("UPDATE jobs SET epoch = epoch + 1 WHERE uid = ?", fenced);
    assertThat(noop.awaitTasks(Duration.ofSeconds(5))).isTrue();

    assertThat(db.query("SELECT uid FROM noop_executions WHERE ended_at >= started_at"))
        .as("both executions are recorded with their start and end")
        .hasSize(2);
    assertThat(db.query("SELECT uid, epoch FROM noop_executions WHERE executed_at IS NOT NULL"))
        .as("only the one whose epoch still held the job took effect")
        .singleElement()
        .satisfies(
            row -> {
              assertThat(row.get("uid")).isEqualTo(kept);
              assertThat(row.get("epoch")).isEqualTo(queue.getJob(kept).orElseThrow().epoch);
            });
  }

  /**
   * The owner's lock session is killed while the job waits to record its end (the database keeps
   * refusing the write); the owner takes the lock back and adopts the job under a new epoch. The
   * end record that finally goes through must be checked against the epoch the row carries then,
   * not the one it was claimed under, or the job fails although it held its row all along.
   */
  @Test
  void shouldLandItsEffectWhenTheJobWasAdoptedWhileItsEndRecordWaited() throws Exception {
    db.clearJobs();
    db.update("DELETE FROM noop_executions");
    db.update("DROP SEQUENCE IF EXISTS refused_ends");
    db.update("CREATE SEQUENCE refused_ends");
    db.update(
        """
        CREATE OR REPLACE FUNCTION refuse_end() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          PERFORM nextval('refused_ends');
          RAISE EXCEPTION 'the database is going away' USING ERRCODE = '57P01';
        END $$""");
    db.update(
        "CREATE TRIGGER refuse_end BEFORE UPDATE ON noop_executions"
            + " FOR EACH ROW EXECUTE FUNCTION refuse_end()");
    try {
      UUID uid = queue.enqueue("noop", Map.of("record", true), null, null, null);
      long claimedUnder = lock.epoch();
      assertThat(noop.runOnce().claimed()).isEqualTo(1);
      awaitTrue(() -> refusedEnds() > 0, Duration.ofSeconds(10));

      db.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
              + " WHERE application_name LIKE 'async-jobs:%'");
      awaitTrue(() -> lock.isOwner() && lock.epoch() > claimedUnder, Duration.ofSeconds(10));
      assertThat(noop.runOnce().adopted()).as("the owner keeps the job it still runs").isEqualTo(1);
      db.update("DROP TRIGGER refuse_end ON noop_executions");
      assertThat(noop.awaitTasks(Duration.ofSeconds(10))).isTrue();
      noop.runOnce();

      Job job = queue.getJob(uid).orElseThrow();
      assertThat(job.error).isNull();
      assertThat(job.status).isEqualTo(JobStatus.DONE);
      assertThat(db.query("SELECT 1 FROM noop_executions WHERE executed_at IS NOT NULL"))
          .as("its effect landed once")
          .hasSize(1);
    } finally {
      db.update("DROP TRIGGER IF EXISTS refuse_end ON noop_executions");
      db.update("DROP FUNCTION IF EXISTS refuse_end()");
      db.update("DROP SEQUENCE IF EXISTS refused_ends");
      awaitTrue(lock::isOwner, Duration.ofSeconds(10));
    }
  }

  private long refusedEnds() {
    Object calls = db.query("SELECT is_called FROM refused_ends").get(0).get("is_called");
    return Boolean.TRUE.equals(calls) ? 1 : 0;
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

  @Test
  void shouldRemoveItsPartialFileWhenAnAttemptFails() throws Exception {
    db.clearJobs();
    UUID uid = queue.enqueue("noop", Map.of("artifact_bytes", 1000), null, null, null);
    // A folder where the artifact belongs: the attempt writes its partial file in full, then
    // cannot rename it into place.
    Path folder = data.root().resolve("artifacts/noop/" + uid);
    Files.createDirectories(folder.resolve("noop.txt/in-the-way"));

    noop.runOnce();
    assertThat(noop.awaitTasks(Duration.ofSeconds(5))).isTrue();
    noop.runOnce();

    assertThat(queue.getJob(uid).orElseThrow().status).isEqualTo(JobStatus.FAILED);
    try (Stream<Path> left = Files.list(folder)) {
      assertThat(left.map(p -> p.getFileName().toString())).containsExactly("noop.txt");
    }
    Trees.delete(folder);
  }

  @Test
  void shouldRejectASleepThatIsNotAWholeNumberInRange() {
    assertThatThrownBy(() -> NoopService.sleepMs(Map.of("sleep_ms", "soon")))
        .hasMessageContaining("whole number");
    assertThatThrownBy(() -> NoopService.sleepMs(Map.of("sleep_ms", 1.5)))
        .hasMessageContaining("whole number");
    assertThatThrownBy(() -> NoopService.sleepMs(Map.of("sleep_ms", -1)))
        .hasMessageContaining("between");
    assertThat(NoopService.sleepMs(Map.of("sleep_ms", 10))).isEqualTo(10);
  }
}
