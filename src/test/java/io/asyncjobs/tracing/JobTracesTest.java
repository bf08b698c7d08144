package io.asyncjobs.tracing;

import static io.asyncjobs.testing.Jobs.as;
import static io.asyncjobs.testing.Jobs.runAll;
import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.kinds.noop.NoopService;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.Tokens;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * With tracing on, a job's processing joins the trace of the request that enqueued it: the
 * request's server span is stored with the job, and {@code job.process <kind>} is its child (and
 * linked to it), with the claim and the outcome write as its own children.
 */
@QuarkusTest
@TestProfile(JobTracesTest.Traced.class)
class JobTracesTest {

  private static final String ALICE = Tokens.user("alice");
  private static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
  private static final String CALLER_SPAN_ID = "00f067aa0ba902b7";
  private static final String CALLER = "00-" + TRACE_ID + "-" + CALLER_SPAN_ID + "-01";
  private static final Duration EXPORT_WAIT = Duration.ofSeconds(10);

  @Inject InMemorySpanExporter spans;
  @Inject NoopService noop;
  @Inject Database db;
  @Inject Tracing tracing;
  @Inject io.asyncjobs.settings.SettingsStore settings;

  @BeforeEach
  void clean() {
    db.clearJobs();
    spans.reset();
  }

  @Test
  void shouldProcessAJobInTheTraceItWasEnqueuedIn() throws Exception {
    assertThat(tracing.enabled()).as("the profile turns tracing on").isTrue();
    String uid = enqueue(CALLER, "{\"sleep_ms\": 1}");
    runAll(noop);

    SpanData server =
        awaitSpan(s -> s.getKind() == SpanKind.SERVER && s.getTraceId().equals(TRACE_ID));
    assertThat(server.getParentSpanId()).as("the caller's span").isEqualTo(CALLER_SPAN_ID);
    assertThat(storedTraceparent(uid))
        .as("the request's own span is what the job keeps")
        .isEqualTo("00-" + TRACE_ID + "-" + server.getSpanId() + "-01");

    SpanData process = awaitSpan(s -> s.getName().equals("job.process noop"));
    assertThat(process.getTraceId()).isEqualTo(TRACE_ID);
    assertThat(process.getParentSpanId()).isEqualTo(server.getSpanId());
    assertThat(process.getKind()).isEqualTo(SpanKind.CONSUMER);
    assertThat(process.getLinks())
        .extracting(LinkData::getSpanContext)
        .anySatisfy(
            link -> {
              assertThat(link.getTraceId()).isEqualTo(TRACE_ID);
              assertThat(link.getSpanId()).isEqualTo(server.getSpanId());
            });
    assertThat(process.getAttributes().get(AttributeKey.stringKey("job.uid"))).isEqualTo(uid);
    assertThat(process.getAttributes().get(AttributeKey.stringKey("job.kind"))).isEqualTo("noop");
    assertThat(process.getAttributes().get(AttributeKey.stringKey("job.owner")))
        .isEqualTo("user:alice");
    assertThat(process.getAttributes().get(AttributeKey.stringKey("job.status"))).isEqualTo("done");
    assertThat(process.getStatus().getStatusCode()).isNotEqualTo(StatusCode.ERROR);

    assertThat(awaitSpan(s -> s.getKind() == SpanKind.CLIENT && s.getTraceId().equals(TRACE_ID)))
        .as("a JDBC span of the enqueue's insert")
        .satisfies(s -> assertThat(s.getParentSpanId()).isEqualTo(server.getSpanId()));

    SpanData claim = awaitSpan(childOf(process, "job.claim"));
    SpanData outcome = awaitSpan(childOf(process, "job.outcome"));
    assertThat(claim.getTraceId()).isEqualTo(TRACE_ID);
    assertThat(outcome.getTraceId()).isEqualTo(TRACE_ID);
    assertThat(claim.getEndEpochNanos()).isLessThanOrEqualTo(outcome.getStartEpochNanos());
    assertThat(process.getStartEpochNanos()).isLessThanOrEqualTo(claim.getStartEpochNanos());
    assertThat(process.getEndEpochNanos()).isGreaterThanOrEqualTo(outcome.getEndEpochNanos());
  }

  @Test
  void shouldMarkAFailedJobsSpanAsAnError() throws Exception {
    enqueue(CALLER, "{\"fail\": \"disk full\"}");
    runAll(noop);

    SpanData process = awaitSpan(s -> s.getName().equals("job.process noop"));
    assertThat(process.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    assertThat(process.getStatus().getDescription()).contains("disk full");
    assertThat(process.getEvents()).anySatisfy(e -> assertThat(e.getName()).isEqualTo("exception"));
    assertThat(process.getAttributes().get(AttributeKey.stringKey("job.status")))
        .isEqualTo("failed");
  }

  @Test
  void shouldNotMarkAFailedAttemptThatIsTriedAgainAsAnError() throws Exception {
    settings.update(
        NoopService.KIND,
        new io.asyncjobs.settings.SettingsOverride(null, null, null, null, null, null, null, 2));
    try {
      String uid = enqueue(CALLER, "{\"fail_attempts\": 1}");
      noop.runOnce();
      assertThat(noop.awaitTasks(Duration.ofSeconds(10))).isTrue();
      noop.runOnce(); // the failed attempt: back to pending

      SpanData attempt = awaitSpan(s -> s.getName().equals("job.process noop"));
      assertThat(attempt.getAttributes().get(AttributeKey.stringKey("job.uid"))).isEqualTo(uid);
      assertThat(attempt.getAttributes().get(AttributeKey.stringKey("job.status")))
          .isEqualTo("pending");
      assertThat(attempt.getStatus().getStatusCode()).isNotEqualTo(StatusCode.ERROR);
      assertThat(attempt.getEvents())
          .as("the attempt's exception is on the span")
          .anySatisfy(e -> assertThat(e.getName()).isEqualTo("exception"));
    } finally {
      settings.update(NoopService.KIND, io.asyncjobs.settings.SettingsOverride.NONE);
    }
  }

  @Test
  void shouldStartANewTraceForAMalformedTraceparent() throws Exception {
    String allZeros = "00-" + "0".repeat(32) + "-" + CALLER_SPAN_ID + "-01";
    String uid = enqueue(allZeros, "{}");
    runAll(noop);

    SpanData process = awaitSpan(s -> s.getName().equals("job.process noop"));
    assertThat(process.getTraceId()).isNotEqualTo("0".repeat(32)).isNotEqualTo(TRACE_ID);
    SpanData server =
        awaitSpan(
            s -> s.getKind() == SpanKind.SERVER && s.getSpanId().equals(process.getParentSpanId()));
    assertThat(server.getParentSpanContext().isValid())
        .as("a root: the header was dropped")
        .isFalse();
    assertThat(storedTraceparent(uid)).contains(process.getTraceId());
  }

  @Test
  void shouldGiveEveryJobOfABatchTheRequestsTraceparent() throws Exception {
    List<String> uids =
        as(ALICE)
            .header("traceparent", CALLER)
            .contentType(ContentType.JSON)
            .body("{\"jobs\": [{\"payload\": {}}, {\"payload\": {}}]}")
            .post("/api/noop/batch")
            .then()
            .statusCode(202)
            .extract()
            .path("jobs.uid");
    runAll(noop);

    SpanData server =
        awaitSpan(s -> s.getKind() == SpanKind.SERVER && s.getTraceId().equals(TRACE_ID));
    String stored = "00-" + TRACE_ID + "-" + server.getSpanId() + "-01";
    assertThat(uids)
        .hasSize(2)
        .allSatisfy(uid -> assertThat(storedTraceparent(uid)).isEqualTo(stored));
    for (String uid : uids) {
      SpanData process =
          awaitSpan(
              s ->
                  s.getName().equals("job.process noop")
                      && uid.equals(s.getAttributes().get(AttributeKey.stringKey("job.uid"))));
      assertThat(process.getParentSpanId()).isEqualTo(server.getSpanId());
    }
  }

  private String enqueue(String traceparent, String body) {
    return as(ALICE)
        .header("traceparent", traceparent)
        .contentType(ContentType.JSON)
        .body(body)
        .post("/api/noop")
        .then()
        .statusCode(202)
        .extract()
        .path("uid");
  }

  private String storedTraceparent(String uid) {
    List<Map<String, Object>> rows =
        db.query("SELECT traceparent FROM jobs WHERE uid = ?", UUID.fromString(uid));
    return (String) rows.get(0).get("traceparent");
  }

  private static Predicate<SpanData> childOf(SpanData parent, String name) {
    return s -> s.getName().equals(name) && s.getParentSpanId().equals(parent.getSpanId());
  }

  /** The first exported span that matches, waiting for the batch processor's export. */
  private SpanData awaitSpan(Predicate<SpanData> wanted) throws InterruptedException {
    long deadline = System.nanoTime() + EXPORT_WAIT.toNanos();
    while (true) {
      for (SpanData span : spans.getFinishedSpanItems()) {
        if (wanted.test(span)) {
          return span;
        }
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("no such span among " + names());
      }
      Thread.sleep(20); // the export is asynchronous: nothing to call instead
    }
  }

  private List<String> names() {
    return spans.getFinishedSpanItems().stream()
        .map(
            s ->
                s.getName()
                    + " "
                    + s.getTraceId()
                    + "/"
                    + s.getSpanId()
                    + "<"
                    + s.getParentSpanId())
        .toList();
  }

  /** Tracing on, exported to the in-memory exporter only, in batches every few milliseconds. */
  public static class Traced implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of(
          "quarkus.otel.sdk.disabled", "false",
          // No OTLP exporter at all: nothing tries a collector on localhost:4317.
          "quarkus.otel.exporter.otlp.enabled", "false",
          "quarkus.otel.bsp.schedule.delay", "10ms",
          "quarkus.datasource.jdbc.telemetry.enabled", "true");
    }
  }
}
