package io.asyncjobs.testing;

import io.asyncjobs.time.Clock;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The clock of every test: the system time until a test sets it, then a fixed instant that only
 * moves when the test advances it. Replaces the application's default clock bean.
 */
@ApplicationScoped
public class TestClock implements Clock {

  private final AtomicReference<Instant> fixed = new AtomicReference<>();

  @Override
  public Instant now() {
    Instant instant = fixed.get();
    return instant == null ? Instant.now() : instant;
  }

  /** Stops the clock at {@code instant}. */
  public void set(Instant instant) {
    fixed.set(instant);
  }

  /** Moves a stopped clock forward (stopping it at the current time first if it runs). */
  public void advance(Duration duration) {
    fixed.updateAndGet(i -> (i == null ? Instant.now() : i).plus(duration));
  }

  /** Back to the system time. */
  public void reset() {
    fixed.set(null);
  }
}
