package io.asyncjobs.config;

import java.time.Duration;

/**
 * The effective settings of one service: its configured defaults with its overrides applied.
 *
 * @param retention how long a finished job is kept after completion
 * @param maxConcurrent jobs processed at the same time
 * @param jobTimeout how long one job may run
 * @param maxRetries recoveries of a vanished job before it is failed
 * @param claimAhead how far claims may run ahead of the free threads, in run time (configuration
 *     only: no admin override)
 * @param claimOrder in which order due jobs of one priority are claimed
 * @param maxPendingPerOwner the most pending jobs one owner may hold, 0 for no limit
 * @param maxRunningPerOwner the most jobs of one owner running at once, 0 for no limit
 * @param maxAttempts attempts of a job whose failures are retryable, 1 for no retry
 * @param retryBackoff the wait before the second attempt, doubled for each later one
 * @param retryBackoffMax the longest wait between two attempts
 * @param paused whether an admin paused the kind: its runners claim nothing. Not an override (a
 *     reset of the overrides keeps it); read with them so that a tick reads both at once
 */
public record ServiceSettings(
    Duration retention,
    int maxConcurrent,
    Duration jobTimeout,
    int maxRetries,
    Duration claimAhead,
    ClaimOrder claimOrder,
    int maxPendingPerOwner,
    int maxRunningPerOwner,
    int maxAttempts,
    Duration retryBackoff,
    Duration retryBackoffMax,
    boolean paused) {

  /** These settings, paused or not as {@code paused} says. */
  public ServiceSettings withPaused(boolean paused) {
    return new ServiceSettings(
        retention,
        maxConcurrent,
        jobTimeout,
        maxRetries,
        claimAhead,
        claimOrder,
        maxPendingPerOwner,
        maxRunningPerOwner,
        maxAttempts,
        retryBackoff,
        retryBackoffMax,
        paused);
  }

  /** The wait before the second attempt when configuration says nothing. */
  public static final Duration DEFAULT_RETRY_BACKOFF = Duration.ofSeconds(10);

  /** The longest wait between attempts when configuration says nothing. */
  public static final Duration DEFAULT_RETRY_BACKOFF_MAX = Duration.ofMinutes(10);

  /** The settings with the default claim order, {@link ClaimOrder#FIFO}. */
  public ServiceSettings(
      Duration retention,
      int maxConcurrent,
      Duration jobTimeout,
      int maxRetries,
      Duration claimAhead) {
    this(
        retention,
        maxConcurrent,
        jobTimeout,
        maxRetries,
        claimAhead,
        ClaimOrder.FIFO,
        0,
        0,
        1,
        DEFAULT_RETRY_BACKOFF,
        DEFAULT_RETRY_BACKOFF_MAX,
        false);
  }

  /** The settings for {@code service} from configuration alone. */
  public static ServiceSettings fromConfig(JobsConfig config, String service) {
    JobsConfig.ServiceDefaults d = config.defaults();
    JobsConfig.ServiceOverrides o = config.services().get(service);
    if (o == null) {
      return new ServiceSettings(
          Duration.ofSeconds(d.retentionSeconds()),
          d.maxConcurrent(),
          Duration.ofSeconds(d.jobTimeoutSeconds()),
          d.maxRetries(),
          d.claimAhead(),
          d.claimOrder(),
          d.maxPendingPerOwner(),
          d.maxRunningPerOwner(),
          d.maxAttempts(),
          d.retryBackoff(),
          d.retryBackoffMax(),
          false);
    }
    return new ServiceSettings(
        Duration.ofSeconds(o.retentionSeconds().orElse(d.retentionSeconds())),
        o.maxConcurrent().orElse(d.maxConcurrent()),
        Duration.ofSeconds(o.jobTimeoutSeconds().orElse(d.jobTimeoutSeconds())),
        o.maxRetries().orElse(d.maxRetries()),
        o.claimAhead().orElse(d.claimAhead()),
        o.claimOrder().orElse(d.claimOrder()),
        o.maxPendingPerOwner().orElse(d.maxPendingPerOwner()),
        o.maxRunningPerOwner().orElse(d.maxRunningPerOwner()),
        o.maxAttempts().orElse(d.maxAttempts()),
        o.retryBackoff().orElse(d.retryBackoff()),
        o.retryBackoffMax().orElse(d.retryBackoffMax()),
        false);
  }

  /**
   * How long a job waits before its next attempt after its {@code failedAttempts}-th failed one:
   * the backoff doubled for each attempt after the first, capped at the most, and drawn at random
   * between half and all of that ("equal jitter"), so that jobs that failed together do not all
   * come back at the same moment, and each wait still grows.
   *
   * @param failedAttempts the attempts failed so far, at least 1
   * @param random a number in [0, 1)
   */
  public Duration retryDelay(int failedAttempts, double random) {
    return io.asyncjobs.time.Backoff.delay(retryBackoff, retryBackoffMax, failedAttempts, random);
  }
}
