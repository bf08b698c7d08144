package io.asyncjobs.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.EnvConfigSource;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The configuration mapping on its own, validated as the application validates it at start. */
class JobsConfigTest {

  @Test
  void shouldApplyTheDocumentedDefaults() {
    JobsConfig config = load(Map.of());

    assertThat(config.dataDir()).isEqualTo(Path.of("/data"));
    assertThat(config.tickInterval()).isEqualTo(Duration.ofSeconds(1));
    ServiceSettings zip = ServiceSettings.fromConfig(config, "zip");
    assertThat(zip.retention()).isEqualTo(Duration.ofDays(7));
    assertThat(zip.maxConcurrent()).isEqualTo(4);
    assertThat(zip.jobTimeout()).isEqualTo(Duration.ofHours(1));
    assertThat(zip.maxRetries()).isEqualTo(3);
  }

  @Test
  void shouldLetOneServiceOverrideSomeSettings() {
    JobsConfig config =
        load(
            Map.of(
                "jobs.defaults.max-concurrent", "3",
                "jobs.services.zip.max-concurrent", "8",
                "jobs.services.zip.retention-seconds", "60"));

    ServiceSettings zip = ServiceSettings.fromConfig(config, "zip");
    assertThat(zip.maxConcurrent()).isEqualTo(8);
    assertThat(zip.retention()).isEqualTo(Duration.ofSeconds(60));
    assertThat(zip.maxRetries()).isEqualTo(3);
    assertThat(ServiceSettings.fromConfig(config, "fork").maxConcurrent()).isEqualTo(3);
  }

  @Test
  void shouldReadTheDataDirFromTheEnvironmentName() {
    // JOBS_DATA_DIR is how the data dir reaches a container; it maps to jobs.data-dir.
    SmallRyeConfig config =
        new SmallRyeConfigBuilder()
            .withMapping(JobsConfig.class)
            .withConverter(Duration.class, 100, new DurationConverter())
            .withSources(new EnvConfigSource(Map.of("JOBS_DATA_DIR", "/mnt/shared"), 300))
            .build();
    assertThat(config.getConfigMapping(JobsConfig.class).dataDir())
        .isEqualTo(Path.of("/mnt/shared"));
  }

  @Test
  void shouldNameTheKeyOfAnOutOfRangeDefault() {
    assertThatThrownBy(() -> load(Map.of("jobs.defaults.max-concurrent", "0")))
        .hasMessageContaining("jobs.defaults.max-concurrent");
  }

  @Test
  void shouldRefuseACleanupRetryDelayUnderASecond() {
    // With no delay a failed cleanup is due again at once, so a sweep that repeats until nothing
    // expired is left (the admin CLI's prune) would retry it forever.
    assertThatThrownBy(() -> load(Map.of("jobs.cleanup-retry-delay", "0s")))
        .hasMessageContaining("jobs.cleanup-retry-delay");
  }

  @Test
  void shouldNameTheKeyOfAnOutOfRangeOverride() {
    assertThatThrownBy(() -> load(Map.of("jobs.services.zip.retention-seconds", "-5")))
        .hasMessageContaining("jobs.services.zip.retention-seconds");
  }

  @Test
  void shouldNameTheKeyOfAValueThatIsNotANumber() {
    assertThatThrownBy(() -> load(Map.of("jobs.defaults.job-timeout-seconds", "soon")))
        .hasMessageContaining("jobs.defaults.job-timeout-seconds");
  }

  /**
   * Each bounded key with the lowest and highest value it takes ("" where there is no upper one).
   */
  @ParameterizedTest
  @CsvSource({
    "jobs.sweep-batch-size, 1, 10000",
    "jobs.claim-ahead-max, 0, 10000",
    "jobs.user-max-priority, -10, 10",
    "jobs.defaults.retention-seconds, 1, 315360000",
    "jobs.defaults.max-concurrent, 1, 256",
    "jobs.defaults.job-timeout-seconds, 1, 315360000",
    "jobs.defaults.max-retries, 0, 100",
    "jobs.defaults.max-pending-per-owner, 0, 1000000000",
    "jobs.defaults.max-running-per-owner, 0, 10000",
    "jobs.defaults.max-attempts, 1, 100",
    "jobs.services.zip.retention-seconds, 1, 315360000",
    "jobs.services.zip.max-concurrent, 1, 256",
    "jobs.services.zip.job-timeout-seconds, 1, 315360000",
    "jobs.services.zip.max-retries, 0, 100",
    "jobs.services.zip.max-pending-per-owner, 0, 1000000000",
    "jobs.services.zip.max-running-per-owner, 0, 10000",
    "jobs.services.zip.max-attempts, 1, 100",
    "jobs.services.zip.shards, 1, " + Shards.MAX_SHARDS_PER_KIND,
    "jobs.api.max-body-bytes, 1024, ''",
    "jobs.api.events-max-per-owner, 1, ''",
    "jobs.auth.token-cache-size, 0, ''",
    "jobs.callbacks.max-in-flight, 1, 256",
    "jobs.callbacks.allowed-ports, 1, 65535",
  })
  void shouldTakeABoundedValueAtItsEdgesAndRefuseItJustPast(String key, long min, String max) {
    assertThat(load(Map.of(key, Long.toString(min)))).isNotNull();
    assertThatThrownBy(() -> load(Map.of(key, Long.toString(min - 1))))
        .hasMessageContaining(key)
        .hasMessageContaining("is " + (min - 1));
    if (!max.isEmpty()) {
      long highest = Long.parseLong(max);
      assertThat(load(Map.of(key, max))).isNotNull();
      assertThatThrownBy(() -> load(Map.of(key, Long.toString(highest + 1))))
          .hasMessageContaining(key)
          .hasMessageContaining("between " + min + " and " + max);
    }
  }

  @ParameterizedTest
  @CsvSource({
    "jobs.sweep-budget, 1ms, 0s",
    "jobs.follower-gauge-interval, 100ms, 99ms",
    "jobs.cleanup-retry-delay, 1s, 999ms",
    "jobs.callbacks.give-up-after, 1s, 999ms",
    "jobs.callbacks.backoff, 1ms, 0s",
    "jobs.callbacks.backoff-max, 1ms, 0s",
    "jobs.callbacks.timeout, 1ms, 0s",
  })
  void shouldTakeTheShortestDurationAndRefuseAShorterOne(
      String key, String shortest, String under) {
    assertThat(load(Map.of(key, shortest))).isNotNull();
    assertThatThrownBy(() -> load(Map.of(key, under)))
        .hasMessageContaining(key + " must be at least");
  }

  @Test
  void shouldRefuseAServiceNameThatNoServiceCouldHave() {
    assertThatThrownBy(() -> load(Map.of("jobs.services.Zip-Files.max-concurrent", "2")))
        .hasMessageContaining("jobs.services.Zip-Files is not a service name");
  }

  @Test
  void shouldRefuseALockNameThatIsNoLeaseName() {
    assertThatThrownBy(() -> load(Map.of("jobs.lock.name", "Owner_Lock")))
        .hasMessageContaining("jobs.lock.name is \"Owner_Lock\"");
    assertThat(load(Map.of("jobs.lock.name", "async-jobs-owner-2")).lock().name())
        .isEqualTo("async-jobs-owner-2");
  }

  @Test
  void shouldListEveryInvalidValueAtOnce() {
    assertThatThrownBy(
            () ->
                load(
                    Map.of(
                        "jobs.defaults.max-concurrent", "0",
                        "jobs.services.fork.max-attempts", "101")))
        .hasMessageContaining("jobs.defaults.max-concurrent must be between 1 and 256, is 0")
        .hasMessageContaining("jobs.services.fork.max-attempts must be between 1 and 100, is 101");
  }

  private static JobsConfig load(Map<String, String> properties) {
    SmallRyeConfig config =
        new SmallRyeConfigBuilder()
            .withMapping(JobsConfig.class)
            .withConverter(Duration.class, 100, new DurationConverter())
            .withSources(new PropertiesConfigSource(properties, "test", 250))
            .withCustomizers(new JobsConfigValidator())
            .build();
    return config.getConfigMapping(JobsConfig.class);
  }
}
