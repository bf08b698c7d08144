package io.asyncjobs.api;

import static io.asyncjobs.testing.Jobs.as;
import static io.asyncjobs.testing.Jobs.enqueueNoop;
import static io.asyncjobs.testing.Jobs.runAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import io.asyncjobs.kinds.noop.NoopService;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.Tokens;
import io.asyncjobs.tracing.Tracing;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * With tracing off (no OTLP endpoint, as in every other test), an enqueue keeps the caller's
 * well-formed {@code traceparent} as sent, ignores a malformed one, and stores nothing without one;
 * the job runs as before either way.
 */
@QuarkusTest
class TraceparentApiTest {

  private static final String ALICE = Tokens.user("alice");
  private static final String SENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

  @Inject Database db;
  @Inject NoopService noop;
  @Inject Tracing tracing;

  @BeforeEach
  void clean() {
    db.clearJobs();
  }

  @Test
  void shouldBeOffWithoutAnEndpoint() {
    assertThat(tracing.enabled()).isFalse();
    assertThat(tracing.currentTraceparent()).isNull();
  }

  @Test
  void shouldKeepAWellFormedTraceparentAsSent() throws Exception {
    String uid = enqueue(SENT);
    assertThat(stored(uid)).isEqualTo(SENT);

    runAll(noop);
    as(ALICE).get("/api/jobs/" + uid).then().statusCode(200).body("status", equalTo("done"));
  }

  @Test
  void shouldIgnoreAMalformedTraceparentRatherThanRefuseTheJob() {
    assertThat(stored(enqueue("00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01"))).isNull();
    assertThat(stored(enqueue("00-" + "0".repeat(32) + "-00f067aa0ba902b7-01"))).isNull();
    assertThat(stored(enqueue("not a traceparent"))).isNull();
  }

  @Test
  void shouldStoreNothingWithoutAHeader() throws Exception {
    String uid = enqueueNoop(ALICE, "{}");
    assertThat(stored(uid)).isNull();
    runAll(noop);
    as(ALICE).get("/api/jobs/" + uid).then().statusCode(200).body("status", equalTo("done"));
  }

  @Test
  void shouldKeepTheTraceparentOfABatchWithEachJob() {
    String first =
        as(ALICE)
            .header("traceparent", SENT)
            .contentType(ContentType.JSON)
            .body("{\"jobs\": [{\"payload\": {}}, {\"payload\": {}, \"idempotency_key\": \"k1\"}]}")
            .post("/api/noop/batch")
            .then()
            .statusCode(202)
            .extract()
            .path("jobs[1].uid");
    assertThat(db.query("SELECT traceparent FROM jobs"))
        .hasSize(2)
        .allSatisfy(row -> assertThat(row.get("traceparent")).isEqualTo(SENT));
    assertThat(stored(first)).isEqualTo(SENT);
  }

  private static String enqueue(String traceparent) {
    return as(ALICE)
        .header("traceparent", traceparent)
        .contentType(ContentType.JSON)
        .body("{}")
        .post("/api/noop")
        .then()
        .statusCode(202)
        .extract()
        .path("uid");
  }

  private String stored(String uid) {
    return (String)
        db.query("SELECT traceparent FROM jobs WHERE uid = ?", UUID.fromString(uid))
            .get(0)
            .get("traceparent");
  }
}
