package io.asyncjobs.engine;

import io.asyncjobs.queue.JobClaims;
import io.asyncjobs.queue.JobOutcomes;
import io.asyncjobs.queue.JobRecovery;
import io.asyncjobs.queue.JobSweep;
import io.asyncjobs.settings.SettingsStore;
import io.asyncjobs.time.Clock;
import java.time.Duration;

/**
 * The engine context a test hands to one role of a run built by hand: the real store roles and
 * settings, the test's clock, no wake-ups, no claim-ahead, no metrics, traces or callbacks.
 */
final class RolesContext {

  private RolesContext() {}

  static EngineContext of(
      JobClaims claims,
      JobOutcomes outcomes,
      JobRecovery recovery,
      JobSweep sweep,
      SettingsStore settings,
      Clock clock) {
    return new EngineContext(
        claims,
        outcomes,
        recovery,
        sweep,
        settings,
        clock,
        100,
        Duration.ofMinutes(1),
        Duration.ofMinutes(5),
        false,
        0,
        0,
        new EngineMetrics() {},
        JobTraces.OFF,
        Deliveries.NONE);
  }
}
