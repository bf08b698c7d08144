package io.asyncjobs.time;

import java.time.Duration;

/** Exponential backoff with jitter, for retried jobs and callback deliveries alike. */
public final class Backoff {

  private Backoff() {}

  /**
   * The wait after the {@code n}-th failure: {@code base} doubled for each failure after the first,
   * capped at {@code max}, then drawn between half and all of that ("equal jitter"): tries that
   * failed together spread out, and each wait still grows.
   *
   * @param n failures so far, at least 1
   * @param random a number in [0, 1)
   */
  public static Duration delay(Duration base, Duration max, int n, double random) {
    long first = Math.max(1, base.toMillis());
    long most = Math.max(first, max.toMillis());
    int doublings = Math.min(Math.max(0, n - 1), 40);
    long full = first > (most >> doublings) ? most : Math.min(most, first << doublings);
    long half = full / 2;
    return Duration.ofMillis(half + (long) ((full - half) * random));
  }
}
