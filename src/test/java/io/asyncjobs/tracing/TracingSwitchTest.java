package io.asyncjobs.tracing;

import static org.assertj.core.api.Assertions.assertThat;

import io.smallrye.config.EnvConfigSource;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.util.Map;
import org.eclipse.microprofile.config.spi.ConfigSource;
import org.junit.jupiter.api.Test;

/**
 * Tracing is off unless an OTLP endpoint is configured, whatever default the extension declares for
 * it; a value set for {@code quarkus.otel.sdk.disabled} itself wins.
 */
class TracingSwitchTest {

  @Test
  void shouldBeOffWithOnlyTheExtensionsDefaultEndpoint() {
    assertThat(sdkDisabled()).isTrue();
  }

  @Test
  void shouldBeOnOnceTheEndpointVariableIsSet() {
    assertThat(
            sdkDisabled(
                new EnvConfigSource(
                    Map.of("QUARKUS_OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4317"), 300)))
        .isFalse();
  }

  @Test
  void shouldBeOnWithATracesEndpointInTheProperties() {
    assertThat(
            sdkDisabled(
                new PropertiesConfigSource(
                    Map.of("quarkus.otel.exporter.otlp.traces.endpoint", "http://collector:4317"),
                    "application.properties",
                    250)))
        .isFalse();
  }

  @Test
  void shouldLetAnExplicitSettingWin() {
    assertThat(
            sdkDisabled(
                new EnvConfigSource(
                    Map.of(
                        "QUARKUS_OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4317",
                        "QUARKUS_OTEL_SDK_DISABLED", "true"),
                    300)))
        .isTrue();
    assertThat(
            sdkDisabled(
                new PropertiesConfigSource(
                    Map.of("quarkus.otel.sdk.disabled", "false"), "test profile", 400)))
        .isFalse();
  }

  private static boolean sdkDisabled(ConfigSource... sources) {
    SmallRyeConfig config =
        new SmallRyeConfigBuilder()
            .withSources(sources)
            .withSources(new TracingSwitch())
            // What quarkus-opentelemetry declares, as Quarkus registers its defaults.
            .withDefaultValue("quarkus.otel.exporter.otlp.endpoint", "http://localhost:4317/")
            .withDefaultValue(
                "quarkus.otel.exporter.otlp.traces.endpoint", "http://localhost:4317/")
            .withDefaultValue(TracingSwitch.SDK_DISABLED, "false")
            .build();
    return config.getValue(TracingSwitch.SDK_DISABLED, Boolean.class);
  }
}
