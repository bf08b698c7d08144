package io.asyncjobs.api;

import static io.asyncjobs.testing.Jobs.as;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import io.asyncjobs.callbacks.CallbackDelivery;
import io.asyncjobs.callbacks.CallbackSignature;
import io.asyncjobs.kinds.noop.NoopService;
import io.asyncjobs.settings.SettingsOverride;
import io.asyncjobs.settings.SettingsStore;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.TestClock;
import io.asyncjobs.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Completion callbacks through the HTTP API, against a receiver on loopback: the status view is
 * POSTed, signed, once the job ends; failed deliveries are tried again with a backoff until one
 * gets a 2xx or the give-up time passes; the delivery shows in the status view; URLs the service
 * may not call are refused at enqueue.
 */
@QuarkusTest
class CallbacksApiTest {

  private static final String ALICE = Tokens.user("alice");
  private static final Instant T0 = Instant.parse("2026-06-01T10:00:00Z");

  @Inject Database db;
  @Inject NoopService noop;
  @Inject TestClock clock;
  @Inject CallbackDelivery deliveries;
  @Inject ObjectMapper json;
  @Inject SettingsStore settings;

  @ConfigProperty(name = "jobs.callbacks.key")
  String key;

  private HttpServer receiver;
  private final List<Delivery> received = Collections.synchronizedList(new ArrayList<>());
  private final AtomicInteger failuresLeft = new AtomicInteger();

  /** When set, the first delivery waits for it before it is answered. */
  private volatile CountDownLatch hangFirst;

  /** One POST the receiver got. */
  record Delivery(String signature, String deliveryId, byte[] body) {}

  @BeforeEach
  void start() throws Exception {
    db.clearJobs();
    clock.set(T0);
    receiver = HttpServer.create(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0), 0);
    receiver.createContext(
        "/hook",
        exchange -> {
          byte[] body = exchange.getRequestBody().readAllBytes();
          CountDownLatch hang = hangFirst;
          if (hang != null && received.isEmpty()) {
            received.add(null); // a place for the hanging one, so the next does not hang
            try {
              hang.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            received.set(
                0,
                new Delivery(
                    exchange.getRequestHeaders().getFirst(CallbackSignature.HEADER),
                    exchange.getRequestHeaders().getFirst("X-Async-Jobs-Delivery"),
                    body));
            // The late answer is an error: written over the later delivery, it would show.
            exchange.sendResponseHeaders(500, -1);
            exchange.close();
            return;
          }
          received.add(
              new Delivery(
                  exchange.getRequestHeaders().getFirst(CallbackSignature.HEADER),
                  exchange.getRequestHeaders().getFirst("X-Async-Jobs-Delivery"),
                  body));
          int status = failuresLeft.getAndDecrement() > 0 ? 500 : 204;
          exchange.sendResponseHeaders(status, -1);
          exchange.close();
        });
    receiver.setExecutor(Executors.newCachedThreadPool());
    receiver.start();
  }

  @AfterEach
  void stop() throws Exception {
    receiver.stop(0);
    noop.runOnce();
    noop.awaitTasks(Duration.ofSeconds(10));
    deliveries.awaitIdle(Duration.ofSeconds(10));
    db.clearJobs();
    settings.update(NoopService.KIND, SettingsOverride.NONE);
    clock.reset();
  }

  @Test
  void shouldDeliverTheSignedStatusViewAfterTwoFailedDeliveries() throws Exception {
    failuresLeft.set(2);
    String uid = enqueue("{\"sleep_ms\": 1}");
    as(ALICE)
        .get("/api/jobs/" + uid)
        .then()
        .body("callback_url", equalTo(hook()))
        .body("callback.state", equalTo("waiting"));

    finish();
    String next =
        as(ALICE)
            .get("/api/jobs/" + uid)
            .then()
            .body("status", equalTo("done"))
            .body("callback.state", equalTo("due"))
            .body("callback.attempts", equalTo(1))
            .body("callback.last_status", equalTo(500))
            .body("callback.last_error", equalTo("HTTP 500"))
            .extract()
            .path("callback.next_attempt_at");
    assertThat(Instant.parse(next)).isBetween(T0.plusMillis(500), T0.plusSeconds(1));

    clock.set(Instant.parse(next).minusMillis(1));
    deliver();
    assertThat(received).as("not before its backoff").hasSize(1);
    clock.set(Instant.parse(next));
    deliver();
    assertThat(received).hasSize(2);
    next = as(ALICE).get("/api/jobs/" + uid).then().extract().path("callback.next_attempt_at");
    clock.set(Instant.parse(next));
    deliver();

    assertThat(received).hasSize(3);
    as(ALICE)
        .get("/api/jobs/" + uid)
        .then()
        .body("callback.state", equalTo("delivered"))
        .body("callback.attempts", equalTo(3))
        .body("callback.last_status", equalTo(204))
        .body("callback.last_error", nullValue())
        .body("callback.delivered_at", equalTo(next))
        .body("callback.next_attempt_at", nullValue());
    for (int i = 0; i < 3; i++) {
      Delivery d = received.get(i);
      assertThat(d.deliveryId()).isEqualTo(uid + "/" + (i + 1));
      assertThat(d.signature()).isEqualTo(expectedSignature(d));
      JsonNode view = json.readTree(d.body());
      assertThat(view.get("uid").asText()).isEqualTo(uid);
      assertThat(view.get("status").asText()).isEqualTo("done");
    }
    clock.advance(Duration.ofDays(1));
    deliver();
    assertThat(received).as("delivered once it got a 2xx, never again").hasSize(3);
  }

  @Test
  void shouldSendAgainWhenADeliveryOutlivesItsLeaseAndKeepTheLaterOutcome() throws Exception {
    // A delivery whose answer never comes back in time (a replica that died mid-delivery looks
    // the same from the row): once its lease (twice the timeout) has passed, the next tick sends
    // the callback again. At least once: the late answer does not overwrite the later outcome.
    hangFirst = new CountDownLatch(1);
    String uid = enqueue("{}");
    noop.runOnce();
    assertThat(noop.awaitTasks(Duration.ofSeconds(10))).isTrue();
    noop.runOnce(); // writes the outcome and starts the delivery, which hangs
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (received.isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(received).as("the first delivery reached the receiver").hasSize(1);
    clock.set(T0.plusSeconds(19));
    noop.runOnce();
    assertThat(received).as("within its lease: not sent again").hasSize(1);
    clock.set(T0.plusSeconds(20));
    noop.runOnce();
    deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (received.size() < 2 && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    hangFirst.countDown();
    assertThat(deliveries.awaitIdle(Duration.ofSeconds(10))).isTrue();

    assertThat(received).as("sent twice: at least once").hasSize(2);
    assertThat(received.get(1).deliveryId()).isEqualTo(uid + "/1");
    as(ALICE)
        .get("/api/jobs/" + uid)
        .then()
        .body("callback.state", equalTo("delivered"))
        .body("callback.delivered_at", equalTo(T0.plusSeconds(20).toString()));
  }

  @Test
  void shouldCallBackABurstOfEndedJobsWithoutWaitingForTicks() throws Exception {
    // 100 jobs ended at once (a bulk cancel): more than the 16 deliveries a shard may have under
    // way, so each delivery that ends starts the next; one tick is all it takes.
    for (int i = 0; i < 100; i++) {
      enqueue("{}");
    }
    db.update(
        "UPDATE jobs SET status = 'failed', error = 'cancelled on request', completed_at = ?,"
            + " updated_at = ? WHERE status = 'pending'",
        java.sql.Timestamp.from(T0),
        java.sql.Timestamp.from(T0));
    long begin = System.nanoTime();
    deliver();
    long tookMillis = (System.nanoTime() - begin) / 1_000_000;
    assertThat(received).as("all in one tick, in %d ms", tookMillis).hasSize(100);
    assertThat(
            db.query("SELECT count(*) AS n FROM jobs WHERE callback->>'delivered_at' IS NOT NULL")
                .get(0)
                .get("n"))
        .isEqualTo(100L);
  }

  @Test
  void shouldTellTheCallerWhatKindOfTroubleItWasAndNotTheDetails() throws Exception {
    // A port nothing listens on: the caller reads "could not connect", not the exception's text.
    java.net.ServerSocket closed =
        new java.net.ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"));
    int port = closed.getLocalPort();
    closed.close();
    String uid =
        as(ALICE)
            .contentType(ContentType.JSON)
            .queryParam("callback_url", "http://127.0.0.1:" + port + "/hook")
            .body("{}")
            .post("/api/noop")
            .then()
            .statusCode(202)
            .extract()
            .path("uid");
    finish();
    as(ALICE)
        .get("/api/jobs/" + uid)
        .then()
        .body("callback.state", equalTo("due"))
        .body("callback.last_error", equalTo("could not connect"))
        .body("callback.last_status", nullValue());
  }

  @Test
  void shouldGiveUpOnceTheGiveUpTimeHasPassed() throws Exception {
    failuresLeft.set(Integer.MAX_VALUE);
    String uid = enqueue("{\"fail\": \"broken\"}");
    finish();
    clock.set(T0.plus(Duration.ofMinutes(59)));
    deliver();
    as(ALICE).get("/api/jobs/" + uid).then().body("callback.state", equalTo("due"));
    clock.set(T0.plus(Duration.ofMinutes(60)));
    deliver();

    as(ALICE)
        .get("/api/jobs/" + uid)
        .then()
        .body("status", equalTo("failed"))
        .body("callback.state", equalTo("gave_up"))
        .body("callback.attempts", equalTo(3))
        .body("callback.next_attempt_at", nullValue());
    assertThat(json.readTree(received.get(0).body()).get("status").asText()).isEqualTo("failed");
    clock.advance(Duration.ofDays(1));
    deliver();
    assertThat(received).hasSize(3);
  }

  @Test
  void shouldKeepAJobPastItsRetentionUntilItsCallbackIsDelivered() throws Exception {
    // A retention shorter than the callbacks' give-up time: the sweep must not delete the row of
    // a callback still due, or the receiver is never told.
    settings.update(
        NoopService.KIND, new SettingsOverride(60L, null, null, null, null, null, null, null));
    failuresLeft.set(Integer.MAX_VALUE);
    String uid = enqueue("{}");
    finish();
    clock.set(T0.plusSeconds(61)); // retention passed; the callback is due again
    deliver();

    as(ALICE)
        .get("/api/jobs/" + uid)
        .then()
        .statusCode(200)
        .body("callback.state", equalTo("due"))
        .body("callback.attempts", equalTo(2));
    failuresLeft.set(0);
    String next =
        as(ALICE).get("/api/jobs/" + uid).then().extract().path("callback.next_attempt_at");
    clock.set(Instant.parse(next));
    deliver();
    assertThat(received).hasSize(3);
    noop.runOnce(); // delivered: now the sweep takes it
    as(ALICE).get("/api/jobs/" + uid).then().statusCode(404);
  }

  @Test
  void shouldCallBackWhenACallerCancelsAPendingJob() throws Exception {
    String uid = enqueue("{}");
    as(ALICE).delete("/api/jobs/" + uid).then().statusCode(200);
    deliver();
    assertThat(received).hasSize(1);
    assertThat(json.readTree(received.get(0).body()).get("error").asText())
        .isEqualTo("cancelled on request");
  }

  @Test
  void shouldTakeACallbackPerJobOfABatch() throws Exception {
    as(ALICE)
        .contentType(ContentType.JSON)
        .body(
            "{\"jobs\": [{\"payload\": {}, \"callback_url\": \""
                + hook()
                + "\"}, {\"payload\": {}}]}")
        .post("/api/noop/batch")
        .then()
        .statusCode(202);
    finish();
    assertThat(received).hasSize(1);
  }

  @Test
  void shouldRefuseUrlsTheServiceMayNotCall() {
    Map<String, String> refusals =
        Map.of(
            "http://example.com/hook", "are not among those callbacks may go to",
            "http://169.254.169.254/latest", "are not among those callbacks may go to",
            "http://postgres.db.svc.cluster.local:5432/", "are not among those",
            "ftp://builds.ci.svc/hook", "must be an absolute http or https URL",
            "/relative", "must be an absolute http or https URL",
            "http://user:secret@builds.ci.svc/hook", "must not carry user information",
            "http://builds.ci.svc/a b", "is not a URL",
            "http://evil.svc.example.com/", "are not among those");
    refusals.forEach(
        (url, why) ->
            as(ALICE)
                .contentType(ContentType.JSON)
                .queryParam("callback_url", url)
                .body("{}")
                .post("/api/noop")
                .then()
                .statusCode(400)
                .body("detail", containsString(why)));
    as(ALICE)
        .contentType(ContentType.JSON)
        .body("{\"jobs\": [{\"payload\": {}, \"callback_url\": 5}]}")
        .post("/api/noop/batch")
        .then()
        .statusCode(400)
        .body("detail", containsString("callback_url must be a URL"));
    as(ALICE)
        .contentType(ContentType.JSON)
        .queryParam("callback_url", "http://builds.ci.svc.cluster.local/hooks/async-jobs")
        .body("{}")
        .post("/api/noop")
        .then()
        .statusCode(202);
    assertThat(db.query("SELECT count(*) AS n FROM jobs").get(0).get("n")).isEqualTo(1L);
  }

  private String enqueue(String body) {
    return as(ALICE)
        .contentType(ContentType.JSON)
        .queryParam("callback_url", hook())
        .body(body)
        .post("/api/noop")
        .then()
        .statusCode(202)
        .extract()
        .path("uid");
  }

  /** Runs the job, writes its outcome, and waits for the first delivery the tick starts. */
  private void finish() throws InterruptedException {
    noop.runOnce();
    assertThat(noop.awaitTasks(Duration.ofSeconds(10))).isTrue();
    deliver();
  }

  /** One tick, and its deliveries to their end. */
  private void deliver() throws InterruptedException {
    noop.runOnce();
    assertThat(deliveries.awaitIdle(Duration.ofSeconds(10))).isTrue();
  }

  private String hook() {
    return "http://127.0.0.1:" + receiver.getAddress().getPort() + "/hook";
  }

  private String expectedSignature(Delivery d) {
    String t = d.signature().substring(2, d.signature().indexOf(','));
    CallbackSignature signer = new CallbackSignature(Base64.getDecoder().decode(key));
    String recomputed = signer.sign(Long.parseLong(t), d.body());
    // The signer is the code under test: check the MAC itself with the JDK too.
    try {
      javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
      mac.init(new javax.crypto.spec.SecretKeySpec(Base64.getDecoder().decode(key), "HmacSHA256"));
      mac.update((t + ".").getBytes(StandardCharsets.US_ASCII));
      String hex = java.util.HexFormat.of().formatHex(mac.doFinal(d.body()));
      assertThat(recomputed).isEqualTo("t=" + t + ",v1=" + hex);
    } catch (java.security.GeneralSecurityException e) {
      throw new AssertionError(e);
    }
    return recomputed;
  }
}
