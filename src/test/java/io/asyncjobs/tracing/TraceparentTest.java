package io.asyncjobs.tracing;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import org.junit.jupiter.api.Test;

class TraceparentTest {

  private static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
  private static final String SPAN_ID = "00f067aa0ba902b7";
  private static final String VALID = "00-" + TRACE_ID + "-" + SPAN_ID + "-01";

  @Test
  void shouldAcceptAWellFormedVersion00Value() {
    assertThat(Traceparent.wellFormed(VALID)).isEqualTo(VALID);
    assertThat(Traceparent.wellFormed("00-" + TRACE_ID + "-" + SPAN_ID + "-00")).isNotNull();
  }

  @Test
  void shouldDropEveryMalformedValue() {
    String[] malformed = {
      null,
      "",
      "garbage",
      VALID.toUpperCase(),
      "01-" + TRACE_ID + "-" + SPAN_ID + "-01",
      "ff-" + TRACE_ID + "-" + SPAN_ID + "-01",
      "00-" + "0".repeat(32) + "-" + SPAN_ID + "-01",
      "00-" + TRACE_ID + "-" + "0".repeat(16) + "-01",
      "00-" + TRACE_ID.substring(1) + "-" + SPAN_ID + "-01",
      "00-" + TRACE_ID + "-" + SPAN_ID + "-1",
      "00-" + TRACE_ID + "-" + SPAN_ID + "-0g",
      VALID + "-extra",
      " " + VALID,
      "00_" + TRACE_ID + "_" + SPAN_ID + "_01",
    };
    for (String value : malformed) {
      assertThat(Traceparent.wellFormed(value)).as(String.valueOf(value)).isNull();
    }
  }

  @Test
  void shouldWriteAndReadASpanContext() {
    SpanContext context =
        SpanContext.create(TRACE_ID, SPAN_ID, TraceFlags.getSampled(), TraceState.getDefault());
    assertThat(Traceparent.of(context)).isEqualTo(VALID);
    assertThat(Traceparent.of(SpanContext.getInvalid())).isNull();

    SpanContext read = Traceparent.context(VALID);
    assertThat(read.getTraceId()).isEqualTo(TRACE_ID);
    assertThat(read.getSpanId()).isEqualTo(SPAN_ID);
    assertThat(read.isSampled()).isTrue();
    assertThat(read.isRemote()).isTrue();
    assertThat(Traceparent.context(null).isValid()).isFalse();
  }
}
