package io.asyncjobs.time;

import java.time.Instant;

/**
 * The current instant. Logic that tests must control asks this instead of {@link Instant#now()},
 * and tests replace it with a settable one.
 */
@FunctionalInterface
public interface Clock {

  /** The current instant. */
  Instant now();
}
