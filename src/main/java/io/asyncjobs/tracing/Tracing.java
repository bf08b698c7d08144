package io.asyncjobs.tracing;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.TracerProvider;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * Whether this process traces, and the tracer its own spans come from: the OpenTelemetry SDK's when
 * tracing is on ({@link TracingSwitch}), a no-op one otherwise, so that code which makes spans
 * costs nothing when it is off.
 */
@ApplicationScoped
public class Tracing {

  /** The instrumentation scope of the spans this application makes itself. */
  static final String SCOPE = "io.asyncjobs";

  private final boolean enabled;
  private final Tracer tracer;

  Tracing(
      @ConfigProperty(name = "quarkus.otel.sdk.disabled", defaultValue = "false") boolean disabled,
      Instance<OpenTelemetry> openTelemetry) {
    this.enabled = !disabled && openTelemetry.isResolvable();
    this.tracer = enabled ? openTelemetry.get().getTracer(SCOPE) : TracerProvider.noop().get(SCOPE);
  }

  /** Whether spans are recorded and exported. */
  public boolean enabled() {
    return enabled;
  }

  /** The application's tracer; a no-op one when tracing is off. */
  public Tracer tracer() {
    return tracer;
  }

  /**
   * The current span (a request's server span, on a request thread) as a traceparent, or null when
   * tracing is off or no span is current.
   */
  public String currentTraceparent() {
    return enabled ? Traceparent.of(Span.current().getSpanContext()) : null;
  }
}
