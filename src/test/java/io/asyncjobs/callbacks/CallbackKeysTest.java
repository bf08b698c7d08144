package io.asyncjobs.callbacks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.asyncjobs.config.JobsConfig;
import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The callbacks key as the service reads it at start, next to the download-link key. */
class CallbackKeysTest {

  private static final String KEY = "ZGV2LW9ubHkgY2FsbGJhY2sga2V5OiBub3QgYSBzZWNyZXQh";
  private static final String OTHER = "YW5vdGhlciBrZXksIHRoaXJ0eS10d28gYnl0ZXMgbG9uZyE=";

  @Test
  void shouldRefuseToStartWhenTheCallbacksKeyIsTheDownloadLinkKey() {
    // Receivers hold the callbacks key by design: with the same key they could sign download
    // links for any job. The same bytes written another way (a trailing newline) are the same key.
    JobsConfig same = load(Map.of("jobs.callbacks.key", KEY, "jobs.api.signing-key", KEY + "\n"));

    assertThatThrownBy(() -> CallbackDelivery.signer(same))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("jobs.callbacks.key")
        .hasMessageContaining("jobs.api.signing-key");
  }

  @Test
  void shouldStartWithTwoDifferentKeysOrWithoutACallbacksKey() {
    assertThat(
            CallbackDelivery.signer(
                load(Map.of("jobs.callbacks.key", KEY, "jobs.api.signing-key", OTHER))))
        .isNotNull();
    assertThat(CallbackDelivery.signer(load(Map.of("jobs.api.signing-key", KEY)))).isNull();
  }

  private static JobsConfig load(Map<String, String> properties) {
    return new SmallRyeConfigBuilder()
        .withMapping(JobsConfig.class)
        .withConverter(Duration.class, 100, new DurationConverter())
        .withSources(new PropertiesConfigSource(properties, "test", 250))
        .build()
        .getConfigMapping(JobsConfig.class);
  }
}
