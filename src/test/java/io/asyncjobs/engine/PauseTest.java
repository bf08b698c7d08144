package io.asyncjobs.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.operations.ServicePauses;
import io.asyncjobs.queue.JobStatus;
import io.asyncjobs.settings.SettingsOverride;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A paused kind's owner claims nothing, while what runs finishes and enqueues are accepted; the
 * pause lives in the database, so it outlasts a reset of the overrides and a handover.
 */
@QuarkusTest
class PauseTest extends ControlledKindFixture {

  @Inject ServicePauses pauses;

  @Test
  void shouldAcceptEnqueuesButClaimNothingWhilePausedAndClaimOnceResumed() {
    pauses.pause("controlled", "user:root", "maintenance");

    UUID waiting = enqueue(Map.of());
    TickResult paused = service.runOnce();

    assertThat(paused.claimed()).isZero();
    assertThat(queue.getJob(waiting).orElseThrow().status).isEqualTo(JobStatus.PENDING);
    assertThat(service.startOrder).isEmpty();

    pauses.resume("controlled");

    assertThat(service.runOnce().claimed()).isEqualTo(1);
    assertThat(queue.getJob(waiting).orElseThrow().status).isNotEqualTo(JobStatus.PENDING);
  }

  @Test
  void shouldLetAJobThatWasRunningFinishAfterThePause() throws Exception {
    UUID running = enqueue(Map.of("block", true, "result", Map.of("ok", true)));
    service.runOnce();
    assertThat(service.nextStarted()).isEqualTo(running);

    pauses.pause("controlled", "user:root", null);
    UUID waiting = enqueue(Map.of());
    service.release(running);
    service.awaitReturned(running);
    TickResult tick = service.runOnce();

    assertThat(queue.getJob(running).orElseThrow().status).isEqualTo(JobStatus.DONE);
    assertThat(tick.claimed()).isZero();
    assertThat(queue.getJob(waiting).orElseThrow().status).isEqualTo(JobStatus.PENDING);
  }

  @Test
  void shouldStayPausedAfterTheOverridesAreResetAndTheShardIsHandedOver() throws Exception {
    settings.update("controlled", new SettingsOverride(null, 2, null, null));
    pauses.pause("controlled", "user:root", "until the fix is out");
    UUID waiting = enqueue(Map.of());
    assertThat(service.runOnce().claimed()).isZero();

    // What `admin settings controlled --reset` does, then a handover to a new owner (here the same
    // replica again, which reads everything afresh).
    db.update("DELETE FROM service_settings WHERE service = 'controlled'");
    manager.handOver(Duration.ofMillis(300));
    try {
      manager.all().stream()
          .filter(JobService.class::isInstance)
          .forEach(s -> ((JobService) s).endDrain());
      assertThat(settings.effective("controlled").paused()).isTrue();
      assertThat(service.runOnce().claimed()).isZero();
      assertThat(queue.getJob(waiting).orElseThrow().status).isEqualTo(JobStatus.PENDING);
    } finally {
      pauses.resume("controlled");
    }
    assertThat(service.runOnce().claimed()).isEqualTo(1);
  }

  @Test
  void shouldStopClaimingOnAWakeUpOnceTheOwnerHeardOfThePause() throws Exception {
    service.runOnce(); // the wake-ups now use these settings: not paused

    pauses.pause("controlled", "user:root", null);
    // The pause's notification makes the next wake-up read the settings again (tests have no
    // listener, so the test delivers it as the listener would).
    manager.wakeFor("controlled" + io.asyncjobs.queue.JobQueue.SETTINGS_CHANGED);
    UUID waiting = enqueue(Map.of());

    assertThat(service.wakeOnce().claimed()).isZero();
    assertThat(queue.getJob(waiting).orElseThrow().status).isEqualTo(JobStatus.PENDING);

    pauses.resume("controlled");
    manager.wakeFor("controlled" + io.asyncjobs.queue.JobQueue.SETTINGS_CHANGED);

    assertThat(service.wakeOnce().claimed()).as("claimed by the wake-up, no tick").isEqualTo(1);
  }
}
