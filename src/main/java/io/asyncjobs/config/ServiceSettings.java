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
    boolean paused) {

  /** The settings of a kind that is not paused. */
  public ServiceSettings(
      Duration retention,
      int maxConcurrent,
      Duration jobTimeout,
      int maxRetries,
      Duration claimAhead,
      ClaimOrder claimOrder,
      int maxPendingPerOwner,
      int maxRunningPerOwner) {
    this(
        retention,
        maxConcurrent,
        jobTimeout,
        maxRetries,
        claimAhead,
        claimOrder,
        maxPendingPerOwner,
        maxRunningPerOwner,
        false);
  }

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
        paused);
  }

  /** The settings with the default claim order, {@link ClaimOrder#FIFO}. */
  public ServiceSettings(
      Duration retention,
      int maxConcurrent,
      Duration jobTimeout,
      int maxRetries,
      Duration claimAhead) {
    this(retention, maxConcurrent, jobTimeout, maxRetries, claimAhead, ClaimOrder.FIFO, 0, 0);
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
          d.maxRunningPerOwner());
    }
    return new ServiceSettings(
        Duration.ofSeconds(o.retentionSeconds().orElse(d.retentionSeconds())),
        o.maxConcurrent().orElse(d.maxConcurrent()),
        Duration.ofSeconds(o.jobTimeoutSeconds().orElse(d.jobTimeoutSeconds())),
        o.maxRetries().orElse(d.maxRetries()),
        o.claimAhead().orElse(d.claimAhead()),
        o.claimOrder().orElse(d.claimOrder()),
        o.maxPendingPerOwner().orElse(d.maxPendingPerOwner()),
        o.maxRunningPerOwner().orElse(d.maxRunningPerOwner()));
  }
}
