package io.asyncjobs.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.queue.Job;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The pickup delay counts from when a job became due: a job delayed for a day, or waiting out a
 * retry's backoff, did not wait for a turn before then, and must not inflate the percentiles.
 */
class PickupDelayTest {

  private static final Instant T0 = Instant.parse("2026-06-01T10:00:00Z");

  @Test
  void shouldCountFromTheLatestOfEnqueueRunAfterAndTheRetryTime() {
    Job job = new Job();
    job.createdAt = T0;
    assertThat(JobMetrics.dueSince(job)).isEqualTo(T0);

    job.runAfter = T0.minusSeconds(60);
    assertThat(JobMetrics.dueSince(job)).as("a run_after already past").isEqualTo(T0);
    job.runAfter = T0.plusSeconds(86_400);
    assertThat(JobMetrics.dueSince(job)).isEqualTo(T0.plusSeconds(86_400));

    job.attempts =
        List.of(
            Map.of("attempt", 1, "retry_at", T0.plusSeconds(90_000).toString()),
            Map.of("attempt", 2, "retry_at", T0.plusSeconds(95_000).toString()));
    assertThat(JobMetrics.dueSince(job)).isEqualTo(T0.plusSeconds(95_000));
  }
}
