package io.asyncjobs.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobStatus;
import io.asyncjobs.settings.SettingsOverride;
import io.quarkus.test.junit.QuarkusTest;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The retry policy: a failure the kind calls transient sends the job back to pending, not claimable
 * before its backoff has passed, until {@code max-attempts}; each failed attempt is kept with its
 * error; other failures fail at once, and orphan recovery keeps its own count. The kind's
 * configured backoff is the default, 10 s doubled per attempt, each wait drawn between half and all
 * of it.
 */
@QuarkusTest
class RetryAttemptsTest extends ControlledKindFixture {

  @Test
  void shouldTryATransientFailureAgainAfterItsBackoffUntilItSucceeds() throws Exception {
    maxAttempts(3);
    UUID uid = enqueue(Map.of("fail_io_attempts", 2));

    runAndSettle(uid);
    Job once = queue.getJob(uid).orElseThrow();
    assertThat(once.status).isEqualTo(JobStatus.PENDING);
    assertThat(once.attempt).isEqualTo(1);
    assertThat(once.error).isNull();
    assertThat(once.attempts).hasSize(1);
    assertThat(once.attempts.get(0))
        .containsEntry("attempt", 1)
        .containsEntry("error", "IOException: connection reset at attempt 1");
    Instant retryAt = Instant.parse((String) once.attempts.get(0).get("retry_at"));
    assertThat(retryAt).isBetween(T0.plusSeconds(5), T0.plusSeconds(10));

    assertThat(io.asyncjobs.operations.JobView.withoutLink(once).retryAt())
        .as("the view says when")
        .isEqualTo(retryAt);
    clock.set(retryAt.minusMillis(1));
    assertThat(service.runOnce().claimed()).as("before its backoff has passed").isZero();
    clock.set(retryAt);
    runAndSettle(uid);
    Job twice = queue.getJob(uid).orElseThrow();
    assertThat(twice.attempt).isEqualTo(2);
    Instant secondRetry = Instant.parse((String) twice.attempts.get(1).get("retry_at"));
    assertThat(Duration.between(retryAt, secondRetry))
        .as("the second wait doubles")
        .isBetween(Duration.ofSeconds(10), Duration.ofSeconds(20));

    clock.set(secondRetry);
    runAndSettle(uid);
    Job done = queue.getJob(uid).orElseThrow();
    assertThat(done.status).isEqualTo(JobStatus.DONE);
    assertThat(done.attempt).isEqualTo(2);
    assertThat(done.attempts).hasSize(2);
    assertThat(executions(uid)).as("three executions, one after another").isEqualTo(3);
  }

  @Test
  void shouldFailAfterTheLastAttemptSayingWhichItWas() throws Exception {
    maxAttempts(2);
    UUID uid = enqueue(Map.of("fail_io_attempts", 5));
    runAndSettle(uid);
    clock.advance(Duration.ofSeconds(10));
    runAndSettle(uid);

    Job failed = queue.getJob(uid).orElseThrow();
    assertThat(failed.status).isEqualTo(JobStatus.FAILED);
    assertThat(failed.error)
        .isEqualTo("IOException: connection reset at attempt 2 (attempt 2 of 2)");
    assertThat(failed.attempts).hasSize(2);
    assertThat(failed.attempts.get(1)).containsEntry("retry_at", null);
    assertThat(failed.completedAt).isNotNull();
    clock.advance(Duration.ofHours(1));
    assertThat(service.runOnce().claimed()).isZero();
    assertThat(executions(uid)).isEqualTo(2);
  }

  @Test
  void shouldFailAtOnceWhenTheFailureIsNotTransient() throws Exception {
    maxAttempts(5);
    UUID bug = enqueue(Map.of("fail", "a bug"));
    UUID missing = enqueue(Map.of("fail_missing", "input.txt"));
    service.runOnce();
    service.awaitReturned(bug);
    service.awaitReturned(missing);
    service.runOnce();

    for (UUID uid : new UUID[] {bug, missing}) {
      Job job = queue.getJob(uid).orElseThrow();
      assertThat(job.status).isEqualTo(JobStatus.FAILED);
      assertThat(job.attempt).isZero();
      assertThat(job.attempts).isNull();
      assertThat(executions(uid)).isEqualTo(1);
    }
    assertThat(queue.getJob(missing).orElseThrow().error)
        .isEqualTo("NoSuchFileException: input.txt");
  }

  @Test
  void shouldNotTryAgainUnderTheDefaultOfOneAttempt() throws Exception {
    UUID uid = enqueue(Map.of("fail_io_attempts", 1));
    runAndSettle(uid);
    Job job = queue.getJob(uid).orElseThrow();
    assertThat(job.status).isEqualTo(JobStatus.FAILED);
    assertThat(job.error).isEqualTo("IOException: connection reset at attempt 1");
    assertThat(job.attempt).isZero();
  }

  @Test
  void shouldKeepOrphanRecoveriesApartFromAttempts() throws Exception {
    maxAttempts(3);
    UUID uid = enqueue(Map.of("fail_io_attempts", 1));
    runAndSettle(uid);
    // The job's next attempt is claimed, then its processor vanishes: its row stays running
    // under this owner's epoch with no task behind it.
    db.update(
        "UPDATE jobs SET status = 'running', delayed_until = NULL, epoch = ? WHERE uid = ?",
        service.ownerLock().epoch(),
        uid);
    settings.update(
        "controlled", new SettingsOverride(null, null, null, null, null, null, null, 3));
    db.update("INSERT INTO service_pauses (service, paused_at) VALUES ('controlled', now())");
    try {
      service.runOnce(); // recovers it; paused, so it stays pending for a look
    } finally {
      db.update("DELETE FROM service_pauses");
    }
    Job recovered = queue.getJob(uid).orElseThrow();
    assertThat(recovered.status).isEqualTo(JobStatus.PENDING);
    assertThat(recovered.retryCount).as("one recovery").isEqualTo(1);
    assertThat(recovered.attempt).as("attempts untouched").isEqualTo(1);
    assertThat(io.asyncjobs.operations.JobView.withoutLink(recovered).retryAt())
        .as("queued again by the recovery, not waiting for a retry: no stale retry time")
        .isNull();

    runAndSettle(uid); // due at once, no backoff: the recovery is not a failed attempt
    Job done = queue.getJob(uid).orElseThrow();
    assertThat(done.status).isEqualTo(JobStatus.DONE);
    assertThat(done.attempt).isEqualTo(1);
    assertThat(executions(uid)).as("the first attempt and the one after the recovery").isEqualTo(2);
  }

  @Test
  void shouldStartOverWhenAnAdminRetriesAJobThatUsedUpItsAttempts() throws Exception {
    maxAttempts(2);
    UUID uid = enqueue(Map.of("fail_io_attempts", 2));
    runAndSettle(uid);
    clock.advance(Duration.ofSeconds(10));
    runAndSettle(uid);
    assertThat(queue.getJob(uid).orElseThrow().status).isEqualTo(JobStatus.FAILED);

    assertThat(bulk.retryJob(uid)).isTrue();
    Job again = queue.getJob(uid).orElseThrow();
    assertThat(again.attempt).isZero();
    assertThat(again.attempts).isNull();
    runAndSettle(uid);
    assertThat(queue.getJob(uid).orElseThrow().attempt)
        .as("a fresh set of attempts: the first fails and is tried again")
        .isEqualTo(1);
    assertThat(queue.getJob(uid).orElseThrow().status).isEqualTo(JobStatus.PENDING);
  }

  private void maxAttempts(int n) {
    settings.update(
        "controlled", new SettingsOverride(null, null, null, null, null, null, null, n));
  }

  /** Claims the job, waits for its task to return, and writes its outcome. */
  private void runAndSettle(UUID uid) throws Exception {
    assertThat(service.runOnce().claimed()).as("claimed").isEqualTo(1);
    service.awaitReturned(uid);
    service.runOnce();
  }

  private long executions(UUID uid) {
    synchronized (service.startOrder) {
      return service.startOrder.stream().filter(uid::equals).count();
    }
  }
}
