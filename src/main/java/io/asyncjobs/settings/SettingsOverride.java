package io.asyncjobs.settings;

import io.asyncjobs.config.ClaimOrder;
import io.asyncjobs.config.ServiceSettings;
import java.time.Duration;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * Run-time overrides of one service's settings, as an admin stored them. A null field keeps the
 * configured value.
 *
 * @param retentionSeconds seconds a finished job is kept, at least 1
 * @param maxConcurrent jobs processed at once, 1 to 256
 * @param jobTimeoutSeconds seconds one job may run, at least 1
 * @param maxRetries recoveries before a vanished job is failed, 0 to 100
 * @param claimOrder {@code fifo} or {@code fair}
 * @param maxPendingPerOwner the most pending jobs one owner may hold, 0 (no limit) to 10^9
 * @param maxRunningPerOwner the most jobs of one owner running at once, 0 (no limit) to 10,000
 * @param maxAttempts attempts of a job whose failures are retryable, 1 (no retry) to 100
 */
@Schema(
    name = "SettingsOverride",
    description =
        "A service's overrides: a null or missing field means the configured value is in force")
public record SettingsOverride(
    @Schema(nullable = true, minimum = "1", maximum = "315360000") Long retentionSeconds,
    @Schema(nullable = true, minimum = "1", maximum = "256") Integer maxConcurrent,
    @Schema(nullable = true, minimum = "1", maximum = "315360000") Long jobTimeoutSeconds,
    @Schema(nullable = true, minimum = "0", maximum = "100") Integer maxRetries,
    @Schema(
            nullable = true,
            enumeration = {"fifo", "fair"})
        String claimOrder,
    @Schema(nullable = true, minimum = "0", maximum = "1000000000") Integer maxPendingPerOwner,
    @Schema(nullable = true, minimum = "0", maximum = "10000") Integer maxRunningPerOwner,
    @Schema(nullable = true, minimum = "1", maximum = "100") Integer maxAttempts) {

  /** The longest retention or timeout an admin may set: ten years, far inside timestamp range. */
  public static final long MAX_SECONDS = 10L * 365 * 24 * 3600;

  /** No overrides at all. */
  public static final SettingsOverride NONE =
      new SettingsOverride(null, null, null, null, null, null, null, null);

  /** Checks every range; a caller can fix what the message names. */
  public SettingsOverride {
    if (retentionSeconds != null && (retentionSeconds < 1 || retentionSeconds > MAX_SECONDS)) {
      throw new IllegalArgumentException(
          "retention_seconds must be between 1 and " + MAX_SECONDS + " (ten years)");
    }
    if (maxConcurrent != null && (maxConcurrent < 1 || maxConcurrent > 256)) {
      throw new IllegalArgumentException("max_concurrent must be between 1 and 256");
    }
    if (jobTimeoutSeconds != null && (jobTimeoutSeconds < 1 || jobTimeoutSeconds > MAX_SECONDS)) {
      throw new IllegalArgumentException(
          "job_timeout_seconds must be between 1 and " + MAX_SECONDS + " (ten years)");
    }
    if (maxRetries != null && (maxRetries < 0 || maxRetries > 100)) {
      throw new IllegalArgumentException("max_retries must be between 0 and 100");
    }
    if (claimOrder != null) {
      ClaimOrder.of(claimOrder);
    }
    if (maxPendingPerOwner != null
        && (maxPendingPerOwner < 0 || maxPendingPerOwner > 1_000_000_000)) {
      throw new IllegalArgumentException(
          "max_pending_per_owner must be between 0 (no limit) and 1000000000");
    }
    if (maxRunningPerOwner != null && (maxRunningPerOwner < 0 || maxRunningPerOwner > 10_000)) {
      throw new IllegalArgumentException(
          "max_running_per_owner must be between 0 (no limit) and 10000");
    }
    if (maxAttempts != null && (maxAttempts < 1 || maxAttempts > 100)) {
      throw new IllegalArgumentException("max_attempts must be between 1 (no retry) and 100");
    }
  }

  /** Overrides of the first seven settings only. */
  public SettingsOverride(
      Long retentionSeconds,
      Integer maxConcurrent,
      Long jobTimeoutSeconds,
      Integer maxRetries,
      String claimOrder,
      Integer maxPendingPerOwner,
      Integer maxRunningPerOwner) {
    this(
        retentionSeconds,
        maxConcurrent,
        jobTimeoutSeconds,
        maxRetries,
        claimOrder,
        maxPendingPerOwner,
        maxRunningPerOwner,
        null);
  }

  /** Overrides of the first five settings only. */
  public SettingsOverride(
      Long retentionSeconds,
      Integer maxConcurrent,
      Long jobTimeoutSeconds,
      Integer maxRetries,
      String claimOrder) {
    this(retentionSeconds, maxConcurrent, jobTimeoutSeconds, maxRetries, claimOrder, null, null);
  }

  /** Overrides of the first four settings only. */
  public SettingsOverride(
      Long retentionSeconds, Integer maxConcurrent, Long jobTimeoutSeconds, Integer maxRetries) {
    this(retentionSeconds, maxConcurrent, jobTimeoutSeconds, maxRetries, null);
  }

  /** {@code base} with these overrides applied. */
  public ServiceSettings applyTo(ServiceSettings base) {
    return new ServiceSettings(
        retentionSeconds == null ? base.retention() : Duration.ofSeconds(retentionSeconds),
        maxConcurrent == null ? base.maxConcurrent() : maxConcurrent,
        jobTimeoutSeconds == null ? base.jobTimeout() : Duration.ofSeconds(jobTimeoutSeconds),
        maxRetries == null ? base.maxRetries() : maxRetries,
        base.claimAhead(),
        claimOrder == null ? base.claimOrder() : ClaimOrder.of(claimOrder),
        maxPendingPerOwner == null ? base.maxPendingPerOwner() : maxPendingPerOwner,
        maxRunningPerOwner == null ? base.maxRunningPerOwner() : maxRunningPerOwner,
        maxAttempts == null ? base.maxAttempts() : maxAttempts,
        base.retryBackoff(),
        base.retryBackoffMax(),
        base.paused());
  }
}
