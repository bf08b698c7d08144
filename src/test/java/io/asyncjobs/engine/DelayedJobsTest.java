package io.asyncjobs.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.queue.JobQueue;
import io.asyncjobs.queue.JobStatus;
import io.quarkus.test.junit.QuarkusTest;
import java.time.Duration;
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

  private UUID enqueueAt(java.time.Instant runAfter) {
    return queue.enqueue(
        "controlled", BLOCK, "user", "tester", null, new JobQueue.Admission(0, false, runAfter));
  }
}
