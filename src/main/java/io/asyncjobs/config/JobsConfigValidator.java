package io.asyncjobs.config;

import io.smallrye.config.ConfigValidationException;
import io.smallrye.config.ConfigValidationException.Problem;
import io.smallrye.config.ConfigValidator;
import io.smallrye.config.SmallRyeConfigBuilder;
import io.smallrye.config.SmallRyeConfigBuilderCustomizer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The bounds of every {@link JobsConfig} value, checked when the configuration is built: an invalid
 * value stops the start with a message that names its key, the bounds and the value.
 *
 * <p>Written out rather than declared with Bean Validation annotations: Hibernate Validator was
 * here for these checks alone and cost about a fifth of the start-up's main thread (building its
 * metadata twice, for the configuration and for the application), on every start of every replica.
 * Registered with Quarkus as a configuration customizer ({@code META-INF/services}).
 */
public final class JobsConfigValidator implements ConfigValidator, SmallRyeConfigBuilderCustomizer {

  /** A service name: what {@code jobs.services.<name>} may be keyed by. */
  static final Pattern SERVICE_NAME = Pattern.compile("[a-z][a-z0-9_]{0,39}");

  /** A Kubernetes object name (RFC 1123 label), which the Lease's name must be. */
  static final Pattern LOCK_NAME = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");

  /** The largest retention and job timeout, in seconds: ten years. */
  static final long TEN_YEARS_SECONDS = 315_360_000;

  @Override
  public void configBuilder(SmallRyeConfigBuilder builder) {
    builder.withValidator(this);
  }

  @Override
  public void validateMapping(Class<?> mappingClass, String prefix, Object mappingObject) {
    if (mappingObject instanceof JobsConfig config) {
      List<Problem> problems = problems(prefix, config);
      if (!problems.isEmpty()) {
        throw new ConfigValidationException(problems.toArray(Problem[]::new));
      }
    }
  }

  /** Every value of {@code config} out of its bounds, each named by its full key. */
  static List<Problem> problems(String prefix, JobsConfig config) {
    Checks checks = new Checks(prefix);
    checks.range("sweep-batch-size", config.sweepBatchSize(), 1, 10_000);
    checks.atLeast("sweep-budget", config.sweepBudget(), Duration.ofMillis(1));
    checks.atLeast(
        "follower-gauge-interval", config.followerGaugeInterval(), Duration.ofMillis(100));
    checks.atLeast("cleanup-retry-delay", config.cleanupRetryDelay(), Duration.ofSeconds(1));
    checks.range("claim-ahead-max", config.claimAheadMax(), 0, 10_000);
    checks.range("claim-ahead-unwritten-max", config.claimAheadUnwrittenMax(), 0, 10_000);
    checks.range("user-max-priority", config.userMaxPriority(), -10, 10);

    JobsConfig.ServiceDefaults defaults = config.defaults();
    checks.range("defaults.retention-seconds", defaults.retentionSeconds(), 1, TEN_YEARS_SECONDS);
    checks.range("defaults.max-concurrent", defaults.maxConcurrent(), 1, 256);
    checks.range(
        "defaults.job-timeout-seconds", defaults.jobTimeoutSeconds(), 1, TEN_YEARS_SECONDS);
    checks.range("defaults.max-retries", defaults.maxRetries(), 0, 100);
    checks.range("defaults.max-pending-per-owner", defaults.maxPendingPerOwner(), 0, 1_000_000_000);
    checks.range("defaults.max-running-per-owner", defaults.maxRunningPerOwner(), 0, 10_000);
    checks.range("defaults.max-attempts", defaults.maxAttempts(), 1, 100);

    for (Map.Entry<String, JobsConfig.ServiceOverrides> service : config.services().entrySet()) {
      String name = service.getKey();
      if (!SERVICE_NAME.matcher(name).matches()) {
        checks.problem(
            "services." + name,
            "is not a service name: a service name matches " + SERVICE_NAME.pattern());
      }
      String key = "services." + name + ".";
      JobsConfig.ServiceOverrides overrides = service.getValue();
      checks.range(key + "retention-seconds", overrides.retentionSeconds(), 1, TEN_YEARS_SECONDS);
      checks.range(key + "max-concurrent", overrides.maxConcurrent(), 1, 256);
      checks.range(
          key + "job-timeout-seconds", overrides.jobTimeoutSeconds(), 1, TEN_YEARS_SECONDS);
      checks.range(key + "max-retries", overrides.maxRetries(), 0, 100);
      checks.range(key + "max-pending-per-owner", overrides.maxPendingPerOwner(), 0, 1_000_000_000);
      checks.range(key + "max-running-per-owner", overrides.maxRunningPerOwner(), 0, 10_000);
      checks.range(key + "max-attempts", overrides.maxAttempts(), 1, 100);
      checks.range(key + "shards", overrides.shards(), 1, Shards.MAX_SHARDS_PER_KIND);
    }

    if (!LOCK_NAME.matcher(config.lock().name()).matches()) {
      checks.problem(
          "lock.name",
          "is \"" + config.lock().name() + "\"; a Lease name matches " + LOCK_NAME.pattern());
    }

    checks.atLeast("api.max-body-bytes", config.api().maxBodyBytes(), 1024);
    checks.atLeast("api.events-max-per-owner", config.api().eventsMaxPerOwner(), 1);
    checks.atLeast("auth.token-cache-size", config.auth().tokenCacheSize(), 0);

    JobsConfig.Callbacks callbacks = config.callbacks();
    for (Integer port : callbacks.allowedPorts()) {
      checks.range("callbacks.allowed-ports", port, 1, 65_535);
    }
    checks.atLeast("callbacks.give-up-after", callbacks.giveUpAfter(), Duration.ofSeconds(1));
    checks.atLeast("callbacks.backoff", callbacks.backoff(), Duration.ofMillis(1));
    checks.atLeast("callbacks.backoff-max", callbacks.backoffMax(), Duration.ofMillis(1));
    checks.atLeast("callbacks.timeout", callbacks.timeout(), Duration.ofMillis(1));
    checks.range("callbacks.max-in-flight", callbacks.maxInFlight(), 1, 256);
    return checks.problems;
  }

  /** Collects the problems of one mapping, each with its full key. */
  private static final class Checks {

    private final String prefix;
    private final List<Problem> problems = new ArrayList<>();

    Checks(String prefix) {
      this.prefix = prefix.isEmpty() ? "" : prefix + ".";
    }

    void range(String key, long value, long min, long max) {
      if (value < min || value > max) {
        problem(key, "must be between " + min + " and " + max + ", is " + value);
      }
    }

    void atLeast(String key, long value, long min) {
      if (value < min) {
        problem(key, "must be at least " + min + ", is " + value);
      }
    }

    void range(String key, Optional<? extends Number> value, long min, long max) {
      value.ifPresent(v -> range(key, v.longValue(), min, max));
    }

    void atLeast(String key, Duration value, Duration min) {
      if (value.compareTo(min) < 0) {
        problem(key, "must be at least " + min.toMillis() + " ms, is " + value.toMillis() + " ms");
      }
    }

    void problem(String key, String message) {
      problems.add(new Problem(prefix + key + " " + message));
    }
  }
}
