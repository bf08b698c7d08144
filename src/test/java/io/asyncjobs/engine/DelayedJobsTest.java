package io.asyncjobs.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.queue.EnqueueRequest;
import io.asyncjobs.queue.JobBulk;
import io.asyncjobs.queue.JobStatus;
import io.asyncjobs.queue.Owner;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A job with a {@code run_after} ahead is pending but not due: no claim takes it before its time,
 * it holds back no due job enqueued after it, and the first tick at or after its time starts it.
 */
@QuarkusTest
class DelayedJobsTest extends ControlledKindFixture {

  private static final Map<String, Object> BLOCK = Map.of("block", true);

  @Inject JobBulk bulk;

  @Test
  void shouldStartADelayedJobAtItsTimeAndNotBefore() throws Exception {
    UUID later = enqueueAt(T0.plusSeconds(60));
    UUID now = enqueue(BLOCK);

    assertThat(service.runOnce().claimed()).as("the due job only").isEqualTo(1);
    assertThat(service.nextStarted()).isEqualTo(now);
    clock.advance(Duration.ofSeconds(59));
    assertThat(service.runOnce().claimed()).as("59 s on").isZero();
    assertThat(queue.getJob(later).orElseThrow().status).isEqualTo(JobStatus.PENDING);

    clock.advance(Duration.ofSeconds(1));
    assertThat(service.runOnce().claimed()).as("at its time").isEqualTo(1);
    assertThat(service.nextStarted()).isEqualTo(later);
    assertThat(queue.getJob(later).orElseThrow().runAfter).isEqualTo(T0.plusSeconds(60));
  }

  @Test
  void shouldTreatATimeAlreadyPastAsDueAtOnce() throws Exception {
    UUID past = enqueueAt(T0.minusSeconds(5));
    assertThat(service.runOnce().claimed()).isEqualTo(1);
    assertThat(service.nextStarted()).isEqualTo(past);
    assertThat(db.query("SELECT delayed_until FROM jobs").get(0).get("delayed_until")).isNull();
  }

  /**
   * A job due tomorrow, cancelled and retried (alone or in bulk), still waits for its time: its
   * view shows that time, and a retry must not make it run at once behind the view's back.
   */
  @Test
  void shouldKeepARetriedJobWaitingForItsRunAfter() throws Exception {
    Instant tomorrow = T0.plus(Duration.ofDays(1));
    UUID single = enqueueAt(tomorrow);
    UUID bulked =
        queue
            .enqueue(
                EnqueueRequest.of("controlled", new Owner("user", "bulk"), BLOCK)
                    .withRunAfter(tomorrow))
            .uid();
    UUID pastDue = enqueueAt(T0.plusSeconds(30)); // its time comes before the retry
    for (UUID uid : List.of(single, bulked, pastDue)) {
      bulk.cancelJob(uid);
      assertThat(queue.getJob(uid).orElseThrow().status).isEqualTo(JobStatus.FAILED);
    }
    clock.advance(Duration.ofMinutes(1));

    assertThat(bulk.retryJob(single)).isTrue();
    assertThat(bulk.retryJob(pastDue)).isTrue();
    assertThat(
            bulk.retry(
                    new JobBulk.Filter(
                        List.of("controlled"),
                        List.of(JobStatus.FAILED),
                        new Owner("user", "bulk"),
                        null,
                        null))
                .affected())
        .isEqualTo(1);

    assertThat(service.runOnce().claimed()).as("only the job whose time has passed").isEqualTo(1);
    assertThat(service.nextStarted()).isEqualTo(pastDue);
    for (UUID uid : List.of(single, bulked)) {
      assertThat(queue.getJob(uid).orElseThrow().status).isEqualTo(JobStatus.PENDING);
      assertThat(queue.getJob(uid).orElseThrow().runAfter).isEqualTo(tomorrow);
    }

    clock.set(tomorrow);
    assertThat(service.runOnce().claimed()).as("at its time").isEqualTo(2);
    assertThat(List.of(service.nextStarted(), service.nextStarted()))
        .containsExactlyInAnyOrder(single, bulked);
  }

  private UUID enqueueAt(java.time.Instant runAfter) {
    return queue
        .enqueue(
            EnqueueRequest.of("controlled", new Owner("user", "tester"), BLOCK)
                .withRunAfter(runAfter))
        .uid();
  }
}
