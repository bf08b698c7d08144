package io.asyncjobs.api;

import static io.asyncjobs.testing.Jobs.as;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code run_after} and {@code delay_seconds} on the enqueue routes, and what they refuse. */
@QuarkusTest
class DelayedEnqueueApiTest {

  private static final String ALICE = Tokens.user("alice");

  @Inject Database db;

  @BeforeEach
  void clean() {
    db.clearJobs();
  }

  @Test
  void shouldKeepTheJobPendingUntilItsTimeAndShowIt() {
    Instant before = Instant.now();
    String uid =
        as(ALICE)
            .contentType(ContentType.JSON)
            .body("{}")
            .post("/api/noop?delay_seconds=600")
            .then()
            .statusCode(202)
            .extract()
            .path("uid");
    String runAfter =
        as(ALICE)
            .get("/api/jobs/" + uid)
            .then()
            .statusCode(200)
            .body("status", equalTo("pending"))
            .extract()
            .path("run_after");
    assertThat(Instant.parse(runAfter)).isBetween(before.plusSeconds(599), before.plusSeconds(660));

    as(ALICE)
        .contentType(ContentType.JSON)
        .body("{}")
        .post("/api/noop?run_after=2030-01-01T00:00:00Z")
        .then()
        .statusCode(400)
        .body("detail", containsString("at most a year ahead"));
    String at = Instant.now().plus(Duration.ofHours(2)).toString();
    as(ALICE)
        .contentType(ContentType.JSON)
        .body(
            "{\"jobs\": [{\"payload\": {}, \"run_after\": \""
                + at
                + "\"}, {\"payload\": {}, \"delay_seconds\": 30}, {\"payload\": {}}]}")
        .post("/api/noop/batch")
        .then()
        .statusCode(202);
    assertThat(db.query("SELECT count(*) AS n FROM jobs WHERE delayed_until IS NOT NULL"))
        .extracting(r -> ((Number) r.get("n")).intValue())
        .containsExactly(3);
  }

  @Test
  void shouldRefuseWhatCannotBeATimeAndEnqueueNothing() {
    for (String bad :
        List.of(
            "delay_seconds=-1",
            "delay_seconds=soon",
            "delay_seconds=40000000",
            "run_after=tomorrow",
            "run_after=2026-12-24T18:00:00",
            "run_after=2026-12-24T18:00:00Z&delay_seconds=5",
            "delay_seconds=5&delay_seconds=6")) {
      as(ALICE)
          .contentType(ContentType.JSON)
          .body("{}")
          .post("/api/noop?" + bad)
          .then()
          .statusCode(400)
          .body("type", equalTo("urn:async-jobs:problem:bad-request"));
    }
    as(ALICE)
        .contentType(ContentType.JSON)
        .body("{\"jobs\": [{\"payload\": {}, \"delay_seconds\": \"5\"}]}")
        .post("/api/noop/batch")
        .then()
        .statusCode(400)
        .body("detail", containsString("jobs[0]: delay_seconds must be a whole number"));
    assertThat(db.query("SELECT uid FROM jobs")).isEmpty();
  }
}
