package io.asyncjobs.queue;

import com.github.f4b6a3.uuid.UuidCreator;
import java.util.UUID;

/**
 * New job ids: UUIDv7, whose leading 48 bits are the Unix time in milliseconds. Ids made by one
 * process strictly increase, also within one millisecond (the generator increments the random part
 * instead of drawing it anew), so ordering by uid is creation order: FIFO.
 */
public final class JobIds {

  private JobIds() {}

  /** The next id. */
  public static UUID next() {
    return UuidCreator.getTimeOrderedEpoch();
  }

  /** The millisecond an id was made in. */
  public static long epochMillis(UUID uid) {
    return uid.getMostSignificantBits() >>> 16;
  }
}
