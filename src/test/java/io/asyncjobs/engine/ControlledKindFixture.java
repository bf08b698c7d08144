package io.asyncjobs.engine;

import io.asyncjobs.queue.JobBulk;
import io.asyncjobs.queue.JobQueue;
import io.asyncjobs.settings.SettingsStore;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.TestClock;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the tests that drive {@link ControlledService} by hand share: an empty queue and no stored
 * settings or pauses before each test, the clock at {@link #T0}, the service's records cleared, and
 * nothing of a test left running for the next one.
 */
abstract class ControlledKindFixture {

  static final Instant T0 = Instant.parse("2026-05-01T08:00:00Z");

  @Inject ControlledService service;
  @Inject JobQueue queue;
  @Inject JobBulk bulk;
  @Inject SettingsStore settings;
  @Inject TestClock clock;
  @Inject ServiceManager manager;
  @Inject Database db;

  @BeforeEach
  void startClean() throws Exception {
    service.reset();
    db.clearJobs();
    db.update("DELETE FROM service_settings");
    db.update("DELETE FROM service_pauses");
    service.runOnce(); // reaps whatever an earlier test left in flight
    service.reset();
    clock.set(T0);
    // Tests that leave running rows of an older epoch need the lock past its takeover window.
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!service.ownerLock().earlierHoldersSettled() && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
  }

  @AfterEach
  void leaveClean() throws Exception {
    service.claimAhead(null);
    service.claimAheadUnwritten(null);
    service.reset();
    clock.reset();
    db.update("DELETE FROM service_settings");
    db.update("DELETE FROM service_pauses");
  }

  /** Enqueues a job of the controlled kind for the test's owner. */
  UUID enqueue(Map<String, Object> payload) {
    return queue.enqueue("controlled", payload, "user", "tester", null);
  }
}
