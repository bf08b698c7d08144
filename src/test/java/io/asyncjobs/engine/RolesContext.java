package io.asyncjobs.engine;

import io.asyncjobs.queue.JobStore;
import io.asyncjobs.settings.SettingsStore;
import io.asyncjobs.time.Clock;
import java.time.Duration;

/**
 * The engine context a test hands to one role of a run built by hand: the real store and settings,
 * the test's clock, no wake-ups, no claim-ahead, no metrics, traces or callbacks.
 */
final class RolesContext {

  private RolesContext() {}

  static EngineContext of(JobStore store, SettingsStore settings, Clock clock) {
    return new EngineContext(
        store,
        settings,
        clock,
        100,
        Duration.ofMinutes(1),
        Duration.ofMinutes(5),
        false,
        0,
        new EngineMetrics() {},
        JobTraces.OFF,
        Deliveries.NONE);
  }
}
