package io.asyncjobs.lock;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.function.BooleanSupplier;

/**
 * One owner lock's meters, labelled with its shard: the per-pod owner and competing gauges, and
 * counters of renewals, changes and errors.
 */
public final class LockMetrics {

  private final Counter renewals;
  private final Counter renewalFailures;
  private final Counter changes;
  private final Counter errors;

  LockMetrics(
      MeterRegistry registry, String shard, BooleanSupplier owner, BooleanSupplier competing) {
    Gauge.builder("jobs.owner", () -> owner.getAsBoolean() ? 1 : 0)
        .tag("shard", shard)
        .description("1 while this pod holds the owner lock and processes jobs, else 0")
        .register(registry);
    Gauge.builder("jobs.owner.competing", () -> competing.getAsBoolean() ? 1 : 0)
        .tag("shard", shard)
        .description(
            "1 while this pod tries for (or renews) the owner lock; 0 means it cannot become owner")
        .register(registry);
    this.renewals =
        Counter.builder("jobs.owner.renewals")
            .tag("shard", shard)
            .description("Confirmed renewals of the owner lock")
            .register(registry);
    this.renewalFailures =
        Counter.builder("jobs.owner.renewal.failures")
            .tag("shard", shard)
            .description("Renewals of the owner lock that failed, losing it")
            .register(registry);
    this.changes =
        Counter.builder("jobs.owner.changes")
            .tag("shard", shard)
            .description("Times this pod gained or lost the owner lock")
            .register(registry);
    this.errors =
        Counter.builder("jobs.owner.errors")
            .tag("shard", shard)
            .description(
                "Errors while trying for, renewing or taking the owner lock (each is retried)")
            .register(registry);
  }

  /** Counts no meters: for tests that build a lock by hand. */
  public static LockMetrics none() {
    return new LockMetrics(new SimpleMeterRegistry(), "all", () -> false, () -> true);
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

  void error() {
    errors.increment();
  }
}
