package io.asyncjobs.api;

import static io.asyncjobs.testing.Jobs.enqueueNoop;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.asyncjobs.kinds.noop.NoopService;
import io.asyncjobs.problem.Problem;
import io.asyncjobs.testing.Database;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@QuarkusTest
class EventsTest {

  private static final String END = "<end of stream>";

  @Inject Database db;
  @Inject NoopService noop;
  @Inject ObjectMapper json;
  @Inject StreamHub hub;

  @TestHTTPResource("/")
  URL base;

  private final HttpClient http = HttpClient.newHttpClient();

  @BeforeEach
  void clean() {
    db.clearJobs();
  }

  @AfterEach
  void settle() throws InterruptedException {
    db.update("UPDATE jobs SET cancel_requested = true WHERE status = 'running'");
    noop.runOnce();
    noop.awaitTasks(Duration.ofSeconds(10));
  }

  /** Reads a stream's events on a background thread; each item is one event's JSON data. */
  private final class EventStream {
    final BlockingQueue<String> events = new LinkedBlockingQueue<>();
    final BlockingQueue<String> comments = new LinkedBlockingQueue<>();
    final CompletableFuture<HttpResponse<Stream<String>>> response;
    volatile Stream<String> body;

    EventStream(String uid, String token) {
      HttpRequest request =
          HttpRequest.newBuilder(URI.create(base + "api/jobs/" + uid + "/events"))
              .header("Authorization", "Bearer " + token)
              .header("Accept", "text/event-stream")
              .build();
      response = http.sendAsync(request, HttpResponse.BodyHandlers.ofLines());
      response.thenAcceptAsync(
          r -> {
            String name = null;
            try (Stream<String> lines = r.body()) {
              body = lines;
              for (String line : (Iterable<String>) lines::iterator) {
                if (line.startsWith(":")) {
                  comments.add(line);
                } else if (line.startsWith("event:")) {
                  name = line.substring(6).trim();
                } else if (line.startsWith("data:") && "job".equals(name)) {
                  events.add(line.substring(5).trim());
                }
              }
            }
            events.add(END);
          });
    }

    JsonNode next() throws Exception {
      String data = events.poll(10, TimeUnit.SECONDS);
      assertThat(data).as("an event within 10 s").isNotNull().isNotEqualTo(END);
      return json.readTree(data);
    }

    /** The client goes away. */
    void close() {
      Stream<String> lines = body;
      if (lines != null) {
        lines.close();
      }
    }

    boolean ended() throws InterruptedException {
      return END.equals(events.poll(10, TimeUnit.SECONDS));
    }
  }

  @Test
  void shouldStreamEachChangeAndEndAfterTheFinalStatus() throws Exception {
    String uid = enqueueNoop(JobsApiTest.ALICE, "{\"sleep_ms\": 60000}");
    EventStream stream = new EventStream(uid, JobsApiTest.ALICE);
    assertThat(stream.response.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    assertThat(stream.response.get().headers().firstValue("Content-Type").orElse(""))
        .startsWith("text/event-stream");

    assertThat(stream.next().get("status").asText()).isEqualTo("pending");

    noop.runOnce();
    assertThat(stream.next().get("status").asText()).isEqualTo("running");

    db.update(
        "UPDATE jobs SET progress = 0.5, progress_items = 7, progress_at = now(),"
            + " updated_at = now() WHERE uid = ?",
        UUID.fromString(uid));
    JsonNode progress = stream.next();
    assertThat(progress.at("/progress/fraction").asDouble()).isEqualTo(0.5);
    assertThat(progress.at("/progress/items").asLong()).isEqualTo(7);

    db.update("UPDATE jobs SET cancel_requested = true WHERE uid = ?", UUID.fromString(uid));
    JsonNode asked = stream.next();
    assertThat(asked.get("cancel_requested").asBoolean()).isTrue();
    noop.runOnce();
    assertThat(noop.awaitTasks(Duration.ofSeconds(10))).isTrue();
    noop.runOnce();

    List<JsonNode> rest = new ArrayList<>();
    JsonNode last = stream.next();
    while (!last.get("status").asText().equals("failed")) {
      rest.add(last);
      last = stream.next();
    }
    assertThat(last.get("error").asText()).isEqualTo("cancelled on request");
    assertThat(rest)
        .allSatisfy(event -> assertThat(event.get("status").asText()).isEqualTo("running"));
    assertThat(stream.ended()).as("the stream ends after the final event").isTrue();
  }

  @Test
  void shouldKeepAnIdleStreamOpenWithCommentLines() throws Exception {
    String uid = enqueueNoop(JobsApiTest.ALICE, "{}");
    EventStream stream = new EventStream(uid, JobsApiTest.ALICE);
    assertThat(stream.next().get("status").asText()).isEqualTo("pending");
    // The test profile sends one after a second of silence.
    assertThat(stream.comments.poll(5, TimeUnit.SECONDS)).isEqualTo(":keep-alive");
    assertThat(stream.events).isEmpty();
  }

  @Test
  void shouldSendOneEventWithTheDownloadLinkForADoneJobAndEnd() throws Exception {
    String uid = enqueueNoop(JobsApiTest.ALICE, "{\"artifact_bytes\": 5}");
    noop.runOnce();
    assertThat(noop.awaitTasks(Duration.ofSeconds(10))).isTrue();
    noop.runOnce();

    EventStream stream = new EventStream(uid, JobsApiTest.ALICE);
    JsonNode done = stream.next();
    assertThat(done.get("status").asText()).isEqualTo("done");
    assertThat(done.get("download_url").asText()).contains("/download?expires=");
    assertThat(stream.ended()).isTrue();
  }

  @Test
  void shouldServeEveryOpenStreamFromOnePollAtATime() throws Exception {
    List<EventStream> streams = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      streams.add(new EventStream(enqueueNoop(JobsApiTest.ALICE, "{}"), JobsApiTest.ALICE));
    }
    for (EventStream stream : streams) {
      assertThat(stream.next().get("status").asText()).isEqualTo("pending");
    }
    assertThat(hub.openStreams()).isGreaterThanOrEqualTo(6);

    int before = hub.polls();
    Thread.sleep(2_000);
    int polls = hub.polls() - before;
    // One statement a poll interval (500 ms) for all of them, not one a stream.
    assertThat(polls).isBetween(2, 6);
    streams.forEach(EventStream::close);
  }

  @Test
  void shouldRefuseAStreamBeyondTheOwnersLimitWith429AndTakeOneOnceAnotherCloses()
      throws Exception {
    List<EventStream> streams = new ArrayList<>();
    String uid = enqueueNoop(JobsApiTest.BOB, "{}");
    for (int i = 0; i < 12; i++) { // %test.jobs.api.events-max-per-owner
      EventStream stream = new EventStream(uid, JobsApiTest.BOB);
      assertThat(stream.next().get("status").asText()).isEqualTo("pending");
      streams.add(stream);
    }

    HttpResponse<String> refused = openPlain(uid, JobsApiTest.BOB);
    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(refused.headers().firstValue("Content-Type")).hasValue(Problem.MEDIA_TYPE);
    assertThat(refused.headers().firstValue("Retry-After")).isPresent();
    assertThat(refused.body()).contains("too-many-streams");

    streams.remove(0).close();
    // The server sees the client gone at its next write (a heartbeat each second here).
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    EventStream again = null;
    while (again == null && System.nanoTime() < deadline) {
      EventStream attempt = new EventStream(uid, JobsApiTest.BOB);
      if (attempt.response.get(10, TimeUnit.SECONDS).statusCode() == 200) {
        again = attempt;
      } else {
        Thread.sleep(200);
      }
    }
    assertThat(again).as("a stream once another one closed").isNotNull();
    assertThat(again.next().get("status").asText()).isEqualTo("pending");
    again.close();
    streams.forEach(EventStream::close);
  }

  private HttpResponse<String> openPlain(String uid, String token) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(base + "api/jobs/" + uid + "/events"))
            .header("Authorization", "Bearer " + token)
            .header("Accept", "text/event-stream")
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void shouldRefuseAnotherOwnersStreamWith404() throws Exception {
    String uid = enqueueNoop(JobsApiTest.ALICE, "{}");
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(URI.create(base + "api/jobs/" + uid + "/events"))
                .header("Authorization", "Bearer " + JobsApiTest.BOB)
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(404);
    assertThat(response.headers().firstValue("Content-Type")).hasValue(Problem.MEDIA_TYPE);
  }
}
