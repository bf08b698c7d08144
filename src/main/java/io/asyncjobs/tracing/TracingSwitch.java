package io.asyncjobs.tracing;

import io.smallrye.config.ConfigSourceContext;
import io.smallrye.config.ConfigSourceFactory;
import io.smallrye.config.ConfigValue;
import io.smallrye.config.common.MapBackedConfigSource;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.config.spi.ConfigSource;

/**
 * Keeps tracing off unless an OTLP endpoint is configured: without one, the OpenTelemetry SDK would
 * export to {@code localhost:4317} and log a failure for every batch. Sets {@code
 * quarkus.otel.sdk.disabled} (a run-time property) from whether {@code
 * quarkus.otel.exporter.otlp.endpoint} or {@code quarkus.otel.exporter.otlp.traces.endpoint} is
 * set, so that setting {@code QUARKUS_OTEL_EXPORTER_OTLP_ENDPOINT} in a deployment turns tracing
 * on. Its ordinal is below {@code application.properties}, so a value set anywhere else wins.
 */
public class TracingSwitch implements ConfigSourceFactory {

  static final String SDK_DISABLED = "quarkus.otel.sdk.disabled";

  private static final List<String> ENDPOINTS =
      List.of("quarkus.otel.exporter.otlp.endpoint", "quarkus.otel.exporter.otlp.traces.endpoint");

  /** Below application.properties (250) and the environment (300). */
  private static final int ORDINAL = 200;

  @Override
  public Iterable<ConfigSource> getConfigSources(ConfigSourceContext context) {
    boolean endpoint = false;
    for (String name : ENDPOINTS) {
      endpoint |= configured(context.getValue(name));
    }
    return List.of(
        new MapBackedConfigSource(
            "tracing on when an OTLP endpoint is set",
            Map.of(SDK_DISABLED, Boolean.toString(!endpoint)),
            ORDINAL) {});
  }

  /**
   * Whether someone set the value: the extension declares {@code http://localhost:4317/} as the
   * endpoints' default, which the lookup here sees too, from the defaults' source (the lowest
   * ordinal there is).
   */
  private static boolean configured(ConfigValue value) {
    return value != null
        && value.getValue() != null
        && !value.getValue().isBlank()
        && value.getConfigSourceOrdinal() > Integer.MIN_VALUE;
  }
}
