package io.asyncjobs.engine;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonParseException;
import io.asyncjobs.config.ServiceSettings;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.SocketTimeoutException;
import java.nio.file.NoSuchFileException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** Which failures are transient by default, and how long a job waits between attempts. */
class RetryPolicyTest {

  @Test
  void shouldCallIoTroubleTransientAndInputErrorsNot() {
    assertThat(transientByDefault(new IOException("connection reset"))).isTrue();
    assertThat(transientByDefault(new SocketTimeoutException("read timed out"))).isTrue();
    assertThat(transientByDefault(new UncheckedIOException(new IOException("disk busy"))))
        .as("an I/O error in the cause chain")
        .isTrue();
    assertThat(transientByDefault(new TransientFailure("peer unavailable"))).isTrue();

    assertThat(transientByDefault(new NoSuchFileException("a.txt"))).isFalse();
    assertThat(transientByDefault(new IOException("could not read", new NoSuchFileException("a"))))
        .as("an input error anywhere in the chain")
        .isFalse();
    assertThat(transientByDefault(new JsonParseException(null, "bad document"))).isFalse();
    assertThat(transientByDefault(new IllegalStateException("a bug"))).isFalse();
    assertThat(transientByDefault(new TimeoutException("not declared"))).isFalse();
  }

  @Test
  void shouldRetryWhatTheKindDeclares() {
    assertThat(
            RetryPolicy.transientByDefault(
                new RuntimeException(new TimeoutException("slow peer")),
                Set.of(TimeoutException.class)))
        .isTrue();
  }

  @Test
  void shouldDoubleEachWaitUpToTheMostWithJitterBetweenHalfAndAll() {
    ServiceSettings s =
        new ServiceSettings(
            Duration.ofDays(1),
            1,
            Duration.ofHours(1),
            3,
            Duration.ZERO,
            io.asyncjobs.config.ClaimOrder.FIFO,
            0,
            0,
            3,
            Duration.ofSeconds(10),
            Duration.ofMinutes(10),
            false);
    assertThat(s.retryDelay(1, 0)).isEqualTo(Duration.ofSeconds(5));
    assertThat(s.retryDelay(1, 0.9999)).isBetween(Duration.ofMillis(9999), Duration.ofSeconds(10));
    assertThat(s.retryDelay(2, 0)).isEqualTo(Duration.ofSeconds(10));
    assertThat(s.retryDelay(3, 0.5)).isEqualTo(Duration.ofSeconds(30));
    assertThat(s.retryDelay(7, 0)).as("capped").isEqualTo(Duration.ofMinutes(5));
    assertThat(s.retryDelay(99, 0.9999))
        .as("no overflow far past the cap")
        .isBetween(Duration.ofMinutes(5), Duration.ofMinutes(10));
  }

  private static boolean transientByDefault(Throwable failure) {
    return RetryPolicy.transientByDefault(failure, Set.of());
  }
}
