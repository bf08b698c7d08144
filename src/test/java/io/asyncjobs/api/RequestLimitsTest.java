package io.asyncjobs.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.asyncjobs.problem.Problem;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.LogCapture;
import io.asyncjobs.testing.RawHttp;
import io.asyncjobs.testing.Tokens;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The body limit ({@code jobs.api.max-body-bytes}, 1 MiB) holds however the body is framed: with a
 * Content-Length, or chunked with none. Either way a larger body gets a 413 problem, nothing is
 * enqueued and nothing is logged as an error.
 */
@QuarkusTest
class RequestLimitsTest {

  private static final String ALICE = Tokens.user("alice");
  private static final int MIB = 1024 * 1024;

  @Inject Database db;
  @Inject ObjectMapper json;
  @Inject RequestLimits limits;

  @TestHTTPResource("/")
  URI base;

  @BeforeEach
  void clean() {
    db.clearJobs();
  }

  @Test
  void shouldRefuseAChunkedBodyOverTheLimitWithAProblemAndNoErrorLog() throws Exception {
    // 2 MiB is over this service's limit; 11 MiB is over Quarkus's own (10 MiB) as well.
    for (int size : new int[] {2 * MIB, 11 * MIB}) {
      try (LogCapture errors = LogCapture.start(Level.SEVERE)) {
        RawHttp.Answer answer =
            RawHttp.send(base, post("Transfer-Encoding: chunked"), body(size), true);

        assertThat(answer.status()).as("%d bytes chunked: %s", size, answer.body()).isEqualTo(413);
        assertProblem(answer, "body-too-large");
        assertThat(answer.closed()).as("the rest of the body is not read").isTrue();
        assertThat(errors.lines()).as("%d bytes chunked", size).isEmpty();
      }
    }
    assertThat(db.query("SELECT uid FROM jobs")).isEmpty();
  }

  @Test
  void shouldRefuseADeclaredLengthOverTheLimitWithAProblemWhateverItsSize() throws Exception {
    for (int size : new int[] {2 * MIB, 11 * MIB}) {
      try (LogCapture errors = LogCapture.start(Level.SEVERE)) {
        // The answer comes on the headers alone: the body need not be sent.
        RawHttp.Answer answer =
            RawHttp.send(base, post("Content-Length: " + size), new byte[0], false);

        assertThat(answer.status()).as("%d bytes declared", size).isEqualTo(413);
        assertProblem(answer, "body-too-large");
        assertThat(answer.body()).contains(Integer.toString(size));
        assertThat(answer.closed()).as("the body is not waited for").isTrue();
        assertThat(errors.lines()).isEmpty();
      }
    }
    assertThat(db.query("SELECT uid FROM jobs")).isEmpty();
  }

  @Test
  void shouldTakeAChunkedBodyWithinTheLimit() throws Exception {
    byte[] body = "{\"sleep_ms\": 1}".getBytes(StandardCharsets.UTF_8);

    RawHttp.Answer answer = RawHttp.send(base, post("Transfer-Encoding: chunked"), body, true);

    assertThat(answer.status()).as(answer.body()).isEqualTo(202);
    assertThat(db.query("SELECT uid FROM jobs")).hasSize(1);
  }

  @Test
  void shouldHoldNoWorkerThreadForClientsThatStallInTheMiddleOfTheirBodies() throws Exception {
    // More stalled clients than the worker pool has threads (Quarkus's default: 200, or 8 per
    // core); each declares a short body, sends half of it and waits.
    int stalled = Math.max(200, 8 * Runtime.getRuntime().availableProcessors()) + 10;
    byte[] body = "{\"sleep_ms\": 1}".getBytes(StandardCharsets.UTF_8);
    List<Socket> clients = new ArrayList<>();
    try (LogCapture errors = LogCapture.start(Level.SEVERE)) {
      try {
        for (int i = 0; i < stalled; i++) {
          clients.add(halfSent(body));
        }
        // None of them holds a worker thread reading its body; before, each did until it went
        // away or the stream's read timeout passed.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        while (System.nanoTime() < deadline && threadsReadingABody() == 0) {
          Thread.sleep(50);
        }
        assertThat(threadsReadingABody()).as("threads blocked reading a body").isZero();
        // A caller that sends its whole body is answered meanwhile.
        assertThat(RawHttp.send(base, post("Content-Length: " + body.length), body, false).status())
            .isEqualTo(202);
      } finally {
        for (Socket client : clients) {
          client.close();
        }
      }
      // The stalled clients went away: their halves enqueued nothing and are no error.
      Thread.sleep(500);
      assertThat(db.query("SELECT uid FROM jobs")).hasSize(1);
      assertThat(errors.lines()).isEmpty();
    }
  }

  @Test
  void shouldAnswerABodyThatStallsPastTheReadTimeoutWithA408Problem() throws Exception {
    byte[] body = "{\"sleep_ms\": 1}".getBytes(StandardCharsets.UTF_8);
    Duration configured = limits.bodyReadTimeout();
    limits.bufferLimits(RequestLimits.BUFFERED_BYTES_IN_ALL, Duration.ofMillis(300));
    try (Socket client = halfSent(body)) {
      client.setSoTimeout(30_000);
      String answer =
          new String(client.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
      assertThat(answer).startsWith("HTTP/1.1 408").contains(Problem.TYPE_PREFIX + "body-timeout");
    } finally {
      limits.bufferLimits(RequestLimits.BUFFERED_BYTES_IN_ALL, configured);
    }
    assertThat(db.query("SELECT uid FROM jobs")).isEmpty();
  }

  @Test
  void shouldReadBodiesAsStreamsOnceTheRoomForWholeOnesIsTaken() throws Exception {
    byte[] body = "{\"sleep_ms\": 1}".getBytes(StandardCharsets.UTF_8);
    Duration configured = limits.bodyReadTimeout();
    // Room for one body read whole: the first stalled client takes it, the second is streamed.
    limits.bufferLimits(body.length, configured);
    List<Socket> clients = new ArrayList<>();
    try {
      for (int i = 0; i < 2; i++) {
        clients.add(halfSent(body));
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (System.nanoTime() < deadline && threadsReadingABody() == 0) {
        Thread.sleep(20);
      }
      assertThat(threadsReadingABody()).as("threads reading a body as a stream").isEqualTo(1);
    } finally {
      for (Socket client : clients) {
        client.close();
      }
      limits.bufferLimits(RequestLimits.BUFFERED_BYTES_IN_ALL, configured);
    }
    assertThat(db.query("SELECT uid FROM jobs")).isEmpty();
  }

  @Test
  void shouldRefuseABodyWithoutATokenAndEnqueueNothing() throws Exception {
    byte[] body = "{\"sleep_ms\": 1}".getBytes(StandardCharsets.UTF_8);
    String head =
        String.join(
            "\r\n",
            "POST /api/noop HTTP/1.1",
            "Host: " + base.getHost() + ":" + base.getPort(),
            "Content-Type: application/json",
            "Content-Length: " + body.length);

    RawHttp.Answer answer = RawHttp.send(base, head, body, false);

    assertThat(answer.status()).isEqualTo(401);
    assertThat(db.query("SELECT uid FROM jobs")).isEmpty();
  }

  @Test
  void shouldLogNoErrorForAChunkedBodyWhoseClientGoesAwayHalfWay() throws Exception {
    try (LogCapture errors = LogCapture.start(Level.SEVERE)) {
      try (Socket client = new Socket(base.getHost(), base.getPort())) {
        OutputStream out = client.getOutputStream();
        out.write(
            (post("Transfer-Encoding: chunked") + "\r\n\r\n8\r\n{\"sleep_\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        // Until a worker thread reads the stream, the client has not been heard.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline && threadsReadingABody() == 0) {
          Thread.sleep(20);
        }
        assertThat(threadsReadingABody()).as("a chunked body is read as a stream").isPositive();
      }
      Thread.sleep(500);
      assertThat(errors.lines()).isEmpty();
    }
    assertThat(db.query("SELECT uid FROM jobs")).isEmpty();
  }

  @Test
  void shouldTakeADeclaredBodyThatArrivesInPieces() throws Exception {
    byte[] body = "{\"sleep_ms\": 1}".getBytes(StandardCharsets.UTF_8);
    try (Socket client = new Socket(base.getHost(), base.getPort())) {
      client.setSoTimeout(30_000);
      OutputStream out = client.getOutputStream();
      out.write(
          (post("Content-Length: " + body.length) + "\r\n\r\n")
              .getBytes(StandardCharsets.ISO_8859_1));
      out.flush();
      for (byte b : body) {
        Thread.sleep(20);
        out.write(b);
        out.flush();
      }
      String status =
          new String(client.getInputStream().readNBytes(12), StandardCharsets.ISO_8859_1);
      assertThat(status).isEqualTo("HTTP/1.1 202");
    }
    assertThat(db.query("SELECT uid FROM jobs")).hasSize(1);
  }

  /** Threads of this process waiting in Quarkus REST's stream of a request body. */
  private static long threadsReadingABody() {
    return Thread.getAllStackTraces().values().stream()
        .filter(
            stack -> Arrays.stream(stack).anyMatch(f -> f.getClassName().startsWith(BODY_STREAM)))
        .count();
  }

  private static final String BODY_STREAM =
      "org.jboss.resteasy.reactive.server.vertx.VertxInputStream";

  /** A client that declared {@code body}, sent its first half and waits. */
  private Socket halfSent(byte[] body) throws Exception {
    Socket client = new Socket(base.getHost(), base.getPort());
    OutputStream out = client.getOutputStream();
    out.write(
        (post("Content-Length: " + body.length) + "\r\n\r\n")
            .getBytes(StandardCharsets.ISO_8859_1));
    out.write(body, 0, body.length / 2);
    out.flush();
    return client;
  }

  private String post(String framing) {
    return String.join(
        "\r\n",
        "POST /api/noop HTTP/1.1",
        "Host: " + base.getHost() + ":" + base.getPort(),
        "Authorization: Bearer " + ALICE,
        "Content-Type: application/json",
        framing);
  }

  /** A valid noop payload of exactly {@code size} bytes, padded with blanks. */
  private static byte[] body(int size) {
    String head = "{\"sleep_ms\": 1";
    return (head + " ".repeat(size - head.length() - 1) + "}").getBytes(StandardCharsets.UTF_8);
  }

  private void assertProblem(RawHttp.Answer answer, String type) throws Exception {
    assertThat(answer.headers().get("content-type"))
        .as("%d %s %s", answer.status(), answer.headers(), answer.body())
        .startsWith(Problem.MEDIA_TYPE);
    JsonNode problem = json.readTree(answer.body());
    assertThat(problem.path("type").asText()).isEqualTo(Problem.TYPE_PREFIX + type);
    assertThat(problem.path("title").asText()).isNotEmpty();
    assertThat(problem.path("status").asInt()).isEqualTo(answer.status());
    assertThat(problem.path("detail").asText()).isNotEmpty();
  }
}
