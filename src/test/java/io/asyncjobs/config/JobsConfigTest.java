package io.asyncjobs.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.EnvConfigSource;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import io.smallrye.config.validator.BeanValidationConfigValidator;
import jakarta.validation.Validation;
import jakarta.validation.Validator;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The configuration mapping on its own, validated as the application validates it at start. */
class JobsConfigTest {

  private static final Validator VALIDATOR =
      Validation.buildDefaultValidatorFactory().getValidator();

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

  private static JobsConfig load(Map<String, String> properties) {
    SmallRyeConfig config =
        new SmallRyeConfigBuilder()
            .withMapping(JobsConfig.class)
            .withConverter(Duration.class, 100, new DurationConverter())
            .withSources(new PropertiesConfigSource(properties, "test", 250))
            .withValidator((BeanValidationConfigValidator) () -> VALIDATOR)
            .build();
    return config.getConfigMapping(JobsConfig.class);
  }
}
