package io.asyncjobs.operations;

import io.asyncjobs.config.ServiceSettings;
import io.asyncjobs.settings.SettingsOverride;
import io.quarkus.runtime.annotations.RegisterForReflection;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * One service's settings: what configuration says, what an admin overrode, and what is in force.
 *
 * @param service the service's name
 * @param configured from configuration alone
 * @param overrides the stored run-time overrides; a null field keeps the configured value
 * @param effective configuration with the overrides applied, used from the owner's next tick
 */
@Schema(name = "Settings", description = "A service's settings: configured, overridden, in force")
@RegisterForReflection(registerFullHierarchy = true)
public record SettingsView(
    String service, Values configured, SettingsOverride overrides, Values effective) {

  /**
   * A full set of settings.
   *
   * @param retentionSeconds how long a finished job is kept
   * @param maxConcurrent jobs processed at once
   * @param jobTimeoutSeconds how long one job may run
   * @param maxRetries recoveries of a vanished job before it fails
   * @param claimOrder {@code fifo} or {@code fair}
   * @param maxPendingPerOwner the most pending jobs one owner may hold, 0 for no limit
   * @param maxRunningPerOwner the most jobs of one owner running at once, 0 for no limit
   * @param maxAttempts attempts of a job whose failures are retryable, 1 for no retry
   */
  @Schema(name = "SettingsValues", description = "A full set of settings")
  public record Values(
      long retentionSeconds,
      int maxConcurrent,
      long jobTimeoutSeconds,
      int maxRetries,
      @Schema(enumeration = {"fifo", "fair"}) String claimOrder,
      int maxPendingPerOwner,
      int maxRunningPerOwner,
      int maxAttempts) {

    static Values of(ServiceSettings s) {
      return new Values(
          s.retention().toSeconds(),
          s.maxConcurrent(),
          s.jobTimeout().toSeconds(),
          s.maxRetries(),
          s.claimOrder().value(),
          s.maxPendingPerOwner(),
          s.maxRunningPerOwner(),
          s.maxAttempts());
    }
  }
}
