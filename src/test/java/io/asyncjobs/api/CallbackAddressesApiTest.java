package io.asyncjobs.api;

import static io.asyncjobs.testing.Jobs.as;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import com.sun.net.httpserver.HttpServer;
import io.asyncjobs.callbacks.CallbackDelivery;
import io.asyncjobs.callbacks.TestResolver;
import io.asyncjobs.kinds.noop.NoopService;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.TestClock;
import io.asyncjobs.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Where a callback's POST goes, with the name lookups in the test's hands: to the address the
 * delivery looked up and checked, not to a second lookup's; and within the timeout, the lookup
 * included.
 */
@QuarkusTest
@TestProfile(CallbackAddressesApiTest.Names.class)
class CallbackAddressesApiTest {

  private static final String ALICE = Tokens.user("alice");
  private static final Instant T0 = Instant.parse("2026-06-01T10:00:00Z");

  /** A receiver listed by name, a suffix for names the test resolves, and a short timeout. */
  public static class Names implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of(
          "jobs.callbacks.allowed-hosts", "127.0.0.1:*,receiver.test:*,*.hooks.test:*",
          "jobs.callbacks.timeout", "1s");
    }
  }

  @Inject Database db;
  @Inject NoopService noop;
  @Inject TestClock clock;
  @Inject CallbackDelivery deliveries;
  @Inject TestResolver dns;

  private HttpServer receiver;
  private final List<String> hosts = Collections.synchronizedList(new ArrayList<>());

  @BeforeEach
  void start() throws Exception {
    db.clearJobs();
    dns.clear();
    clock.set(T0);
    receiver = HttpServer.create(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0), 0);
    receiver.createContext(
        "/hook",
        exchange -> {
          exchange.getRequestBody().readAllBytes();
          hosts.add(exchange.getRequestHeaders().getFirst("Host"));
          exchange.sendResponseHeaders(204, -1);
          exchange.close();
        });
    receiver.start();
  }

  @AfterEach
  void stop() throws Exception {
    receiver.stop(0);
    deliveries.awaitIdle(Duration.ofSeconds(10));
    dns.clear();
    db.clearJobs();
    clock.reset();
  }

  @Test
  void shouldPostToTheAddressTheDeliveryLookedUp() throws Exception {
    // receiver.test exists only in the test's resolver: the POST reaches the receiver only if the
    // connection goes to the address that lookup answered, under the name the URL gives.
    dns.answer("receiver.test", "127.0.0.1");
    int port = receiver.getAddress().getPort();
    String uid = enqueue("http://receiver.test:" + port + "/hook");

    finish();

    assertThat(hosts).containsExactly("receiver.test:" + port);
    assertThat(dns.lookups("receiver.test")).as("one lookup per delivery").isEqualTo(1);
    as(ALICE).get("/api/jobs/" + uid).then().body("callback.state", equalTo("delivered"));
  }

  @Test
  void shouldEndADeliveryWhoseLookupHangsWithinTheTimeout() throws Exception {
    // A lookup is not bounded by any socket timeout: unbounded, a delivery outlives its lease
    // (twice the timeout) and the same callback is taken again while it still runs.
    dns.answer("slow.hooks.test", TestResolver.HANG);
    String uid = enqueue("http://slow.hooks.test/hook");
    noop.runOnce();
    assertThat(noop.awaitTasks(Duration.ofSeconds(10))).isTrue();
    long begin = System.nanoTime();
    noop.runOnce();

    assertThat(deliveries.awaitIdle(Duration.ofSeconds(5)))
        .as("the delivery ended within its timeout of 1 s")
        .isTrue();
    assertThat(Duration.ofNanos(System.nanoTime() - begin)).isLessThan(Duration.ofSeconds(2));
    as(ALICE)
        .get("/api/jobs/" + uid)
        .then()
        .body("callback.state", equalTo("due"))
        .body("callback.last_error", equalTo("no connection within the timeout"));
  }

  private String enqueue(String url) {
    return as(ALICE)
        .contentType(ContentType.JSON)
        .queryParam("callback_url", url)
        .body("{}")
        .post("/api/noop")
        .then()
        .statusCode(202)
        .extract()
        .path("uid");
  }

  private void finish() throws InterruptedException {
    noop.runOnce();
    assertThat(noop.awaitTasks(Duration.ofSeconds(10))).isTrue();
    noop.runOnce();
    assertThat(deliveries.awaitIdle(Duration.ofSeconds(10))).isTrue();
  }
}
