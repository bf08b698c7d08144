package io.asyncjobs.queue;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.UUID;
import org.junit.jupiter.api.Test;

class JobIdsTest {

  @Test
  void shouldIncreaseStrictlyEvenWithinOneMillisecond() {
    UUID previous = JobIds.next();
    int sameMillisecond = 0;
    for (int i = 0; i < 100_000; i++) {
      UUID next = JobIds.next();
      // PostgreSQL orders uuids as unsigned bytes, which is the order of their hex text.
      assertThat(next.toString()).isGreaterThan(previous.toString());
      if (JobIds.epochMillis(next) == JobIds.epochMillis(previous)) {
        sameMillisecond++;
      }
      previous = next;
    }
    assertThat(sameMillisecond)
        .as("ids that shared a millisecond with their predecessor")
        .isPositive();
  }

  @Test
  void shouldBeVersion7WithTheCurrentTime() {
    long before = System.currentTimeMillis();
    UUID uid = JobIds.next();
    long after = System.currentTimeMillis();

    assertThat(uid.version()).isEqualTo(7);
    assertThat(JobIds.epochMillis(uid)).isBetween(before, after);
  }
}
