package io.asyncjobs.kinds.noop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.asyncjobs.files.Trees;
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
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

@QuarkusTest
class NoopServiceTest {

  @Inject NoopService noop;
  @Inject JobQueue queue;
  @Inject Database db;
  @Inject DataDirectory data;

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
