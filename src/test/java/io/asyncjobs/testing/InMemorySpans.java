package io.asyncjobs.testing;

import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/**
 * The exporter the traced tests read spans from. With the default {@code cdi} trace exporter the
 * SDK sends finished spans to every {@code SpanExporter} bean; while tracing is off (every other
 * test profile) nothing reaches it.
 */
public class InMemorySpans {

  @Produces
  @Singleton
  InMemorySpanExporter exporter() {
    return InMemorySpanExporter.create();
  }
}
