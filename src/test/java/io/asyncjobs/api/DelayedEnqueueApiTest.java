package io.asyncjobs.api;

import static io.asyncjobs.testing.Jobs.as;
import static io.restassured.RestAssured.given;
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
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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

  @Test
  void shouldRefuseAFarPastRunAfterWithA400OnBothRoutesAndEnqueueNothing() {
    // Year -5000 passed the single route (stored as 5001 BC) and failed the batch's insert with a
    // 500 (PostgreSQL: timestamp out of range); both routes must refuse it alike.
    String farPast = "-5000-01-01T00:00:00Z";
    as(ALICE)
        .contentType(ContentType.JSON)
        .body("{}")
        .post("/api/noop?run_after=" + farPast)
        .then()
        .statusCode(400)
        .body("type", equalTo("urn:async-jobs:problem:bad-request"))
        .body("detail", containsString("run_after"));
    as(ALICE)
        .contentType(ContentType.JSON)
        .body(
            "{\"jobs\": [{\"payload\": {}}, {\"payload\": {}, \"run_after\": \""
                + farPast
                + "\"}]}")
        .post("/api/noop/batch")
        .then()
        .statusCode(400)
        .body("type", equalTo("urn:async-jobs:problem:bad-request"))
        .body("detail", containsString("jobs[1]: run_after"));
    assertThat(db.query("SELECT uid FROM jobs")).isEmpty();

    // A time in the recent past still means due at once, on both routes.
    String anHourAgo = Instant.now().minus(Duration.ofHours(1)).toString();
    as(ALICE)
        .contentType(ContentType.JSON)
        .body("{}")
        .post("/api/noop?run_after=" + anHourAgo)
        .then()
        .statusCode(202);
    as(ALICE)
        .contentType(ContentType.JSON)
        .body("{\"jobs\": [{\"payload\": {}, \"run_after\": \"" + anHourAgo + "\"}]}")
        .post("/api/noop/batch")
        .then()
        .statusCode(202);
    assertThat(db.query("SELECT uid FROM jobs WHERE delayed_until IS NULL")).hasSize(2);
  }

  @Test
  void shouldTakeExactlyTheDelayRangeTheOpenApiDocumentStates() {
    // The document said 0 to 31536000 while the route took up to 31622400.
    List<Map<String, Object>> parameters =
        given()
            .queryParam("format", "json")
            .get("/q/openapi")
            .then()
            .statusCode(200)
            .extract()
            .jsonPath()
            .getList("paths.'/api/noop'.post.parameters");
    Map<String, Object> delay =
        parameters.stream().filter(p -> "delay_seconds".equals(p.get("name"))).findFirst().get();
    Matcher range = Pattern.compile("0 to (\\d+)").matcher((String) delay.get("description"));
    assertThat(range.find()).as("the description states the range").isTrue();
    long stated = Long.parseLong(range.group(1));
    as(ALICE)
        .contentType(ContentType.JSON)
        .body("{}")
        .post("/api/noop?delay_seconds=" + (stated + 1))
        .then()
        .statusCode(400);
    as(ALICE)
        .contentType(ContentType.JSON)
        .body("{}")
        .post("/api/noop?delay_seconds=" + stated)
        .then()
        .statusCode(202);
    @SuppressWarnings("unchecked")
    Map<String, Object> schema = (Map<String, Object>) delay.get("schema");
    assertThat(((Number) schema.get("maximum")).longValue()).isEqualTo(stated);
    assertThat(((Number) schema.get("minimum")).longValue()).isZero();
  }
}
