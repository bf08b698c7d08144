package io.asyncjobs.tracing;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The W3C Trace Context {@code traceparent} value a job keeps of the request that enqueued it:
 * {@code 00-<32 hex trace id>-<16 hex span id>-<2 hex flags>}, lower-case, neither id all zeros.
 */
public final class Traceparent {

  /** The request header, as the W3C Trace Context recommendation names it. */
  public static final String HEADER = "traceparent";

  /**
   * Version 00 exactly: its length is fixed, and a longer value is invalid (only a future version
   * may add fields). Upper-case hex is invalid too.
   */
  private static final Pattern VERSION_00 =
      Pattern.compile("00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}");

  private static final String ZERO_TRACE_ID = "0".repeat(32);
  private static final String ZERO_SPAN_ID = "0".repeat(16);

  private static final TextMapGetter<String> ONE_VALUE =
      new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(String carrier) {
          return List.of(HEADER);
        }

        @Override
        public String get(String carrier, String key) {
          return HEADER.equals(key) ? carrier : null;
        }
      };

  private Traceparent() {}

  /**
   * {@code value} when it is a well-formed version-00 traceparent, else null. A malformed one is
   * dropped rather than refused: the recommendation says a receiver then starts a new trace.
   */
  public static String wellFormed(String value) {
    if (value == null || !VERSION_00.matcher(value).matches()) {
      return null;
    }
    if (value.regionMatches(3, ZERO_TRACE_ID, 0, 32)
        || value.regionMatches(36, ZERO_SPAN_ID, 0, 16)) {
      return null;
    }
    return value;
  }

  /** A span context as a version-00 traceparent, or null when it is not valid. */
  public static String of(SpanContext context) {
    if (context == null || !context.isValid()) {
      return null;
    }
    return "00-"
        + context.getTraceId()
        + "-"
        + context.getSpanId()
        + "-"
        + context.getTraceFlags().asHex();
  }

  /**
   * The remote span context a stored traceparent names, read by the W3C propagator; the invalid
   * context for null or a value the propagator refuses.
   */
  public static SpanContext context(String traceparent) {
    if (traceparent == null) {
      return SpanContext.getInvalid();
    }
    Context extracted =
        W3CTraceContextPropagator.getInstance().extract(Context.root(), traceparent, ONE_VALUE);
    return Span.fromContext(extracted).getSpanContext();
  }
}
