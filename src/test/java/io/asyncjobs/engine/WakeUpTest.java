package io.asyncjobs.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.queue.JobQueue;
import io.asyncjobs.queue.JobStatus;
import io.asyncjobs.testing.Database;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** With wake-ups on and no scheduled tick, jobs still start and finish at once. */
@QuarkusTest
@TestProfile(WakeUpTest.WakeUps.class)
class WakeUpTest {

  @Inject ControlledService service;
  @Inject JobQueue queue;
  @Inject Database db;

  @Test
  void shouldStartAJobOnNotifyAndReapItWhenItsTaskFinishes() throws Exception {
    db.clearJobs();
    UUID uid = queue.enqueue("controlled", Map.of("block", true), null, null, null);

    // No runOnce() here and no tick: only the NOTIFY from the enqueue can start it.
    assertThat(service.nextStarted()).isEqualTo(uid);

    service.release(uid);
    // The finished task wakes its service, which reaps it; no tick runs in tests.
    assertThat(awaitFinalStatus(uid)).isEqualTo(JobStatus.DONE);
  }

  @Test
  void shouldReapEveryJobByItsOwnWakeUpWithoutATick() throws Exception {
    db.clearJobs();
    // One job at a time, so nothing but its own finished task can get it reaped. A wake-up that
    // ran before the outcome was recorded used to leave a job running until the next tick.
    for (int i = 0; i < 100; i++) {
      UUID uid = queue.enqueue("controlled", Map.of("result", Map.of("i", i)), null, null, null);
      assertThat(awaitFinalStatus(uid)).as("job %d", i).isEqualTo(JobStatus.DONE);
    }
  }

  private JobStatus awaitFinalStatus(UUID uid) throws InterruptedException {
    JobStatus status = JobStatus.PENDING;
    for (int i = 0; i < 200 && !status.isFinal(); i++) {
      Thread.sleep(10);
      status = queue.getJob(uid).orElseThrow().status;
    }
    return status;
  }

  /** Turns wake-ups on; the scheduled tick stays off as in every test. */
  public static class WakeUps implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of("jobs.wake-ups", "true");
    }
  }
}
