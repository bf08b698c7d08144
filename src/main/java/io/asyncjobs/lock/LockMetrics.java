package io.asyncjobs.lock;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.function.BooleanSupplier;

/** The owner lock's meters: the per-pod owner gauge and counters of renewals and changes. */
public final class LockMetrics {

  private final Counter renewals;
  private final Counter renewalFailures;
  private final Counter changes;

  LockMetrics(MeterRegistry registry, BooleanSupplier owner) {
    Gauge.builder("jobs.owner", () -> owner.getAsBoolean() ? 1 : 0)
        .description("1 while this pod holds the owner lock and processes jobs, else 0")
        .register(registry);
    this.renewals =
        Counter.builder("jobs.owner.renewals")
            .description("Confirmed renewals of the owner lock")
            .register(registry);
    this.renewalFailures =
        Counter.builder("jobs.owner.renewal.failures")
            .description("Renewals of the owner lock that failed, losing it")
            .register(registry);
    this.changes =
        Counter.builder("jobs.owner.changes")
            .description("Times this pod gained or lost the owner lock")
            .register(registry);
  }

  /** Counts no meters: for tests that build a lock by hand. */
  public static LockMetrics none() {
    return new LockMetrics(new SimpleMeterRegistry(), () -> false);
  }

  void renewed() {
    renewals.increment();
  }

  void renewalFailed() {
    renewalFailures.increment();
  }

  void ownershipChanged() {
    changes.increment();
  }
}
