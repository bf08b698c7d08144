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
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The {@code priority} of an enqueue: a query parameter on the single route, a field of each job on
 * the batch route; -10 to 10, higher first. Ordinary callers may only lower theirs (up to {@code
 * jobs.user-max-priority}, 0); admins and service principals use the whole range.
 */
@QuarkusTest
class PriorityApiTest {

  private static final String ALICE = Tokens.user("alice");
  private static final String ADMIN = Tokens.admin("root");
  private static final String BILLING = Tokens.ofKind("service", "billing");

  @Inject Database db;

  @BeforeEach
  void clean() {
    db.clearJobs();
  }

  @Test
  void shouldStoreAndShowThePriorityAskedFor() {
    String uid =
        as(ADMIN)
            .contentType(ContentType.JSON)
            .body("{\"sleep_ms\": 1}")
            .post("/api/noop?priority=7")
            .then()
            .statusCode(202)
            .extract()
            .path("uid");
    as(ADMIN).get("/api/jobs/" + uid).then().statusCode(200).body("priority", equalTo(7));

    String plain =
        as(ALICE)
            .contentType(ContentType.JSON)
            .body("{}")
            .post("/api/noop")
            .then()
            .statusCode(202)
            .extract()
            .path("uid");
    as(ALICE).get("/api/jobs/" + plain).then().body("priority", equalTo(0));
    as(ALICE)
        .contentType(ContentType.JSON)
        .body("{}")
        .post("/api/noop?priority=-4")
        .then()
        .statusCode(202);
    as(BILLING)
        .contentType(ContentType.JSON)
        .body("{}")
        .post("/api/noop?priority=10")
        .then()
        .statusCode(202);
    assertThat(db.query("SELECT priority FROM jobs ORDER BY priority"))
        .extracting(r -> ((Number) r.get("priority")).intValue())
        .containsExactly(-4, 0, 7, 10);
  }

  @Test
  void shouldRefuseAPriorityOutOfRangeOrAboveTheCallersAndEnqueueNothing() {
    for (String bad : List.of("11", "-11", "high", "1.5", "")) {
      as(ADMIN)
          .contentType(ContentType.JSON)
          .body("{}")
          .post("/api/noop?priority=" + bad)
          .then()
          .statusCode(400)
          .body("type", equalTo("urn:async-jobs:problem:bad-request"))
          .body("detail", containsString("priority"));
    }
    as(ALICE)
        .contentType(ContentType.JSON)
        .body("{}")
        .post("/api/noop?priority=1")
        .then()
        .statusCode(403)
        .body("detail", containsString("at most 0"));
    as(ADMIN)
        .contentType(ContentType.JSON)
        .body("{}")
        .post("/api/noop?priority=1&priority=2")
        .then()
        .statusCode(400);
    assertThat(db.query("SELECT uid FROM jobs")).isEmpty();
  }

  @Test
  void shouldTakeEachBatchJobsPriority() {
    as(BILLING)
        .contentType(ContentType.JSON)
        .body(
            "{\"jobs\": [{\"payload\": {}, \"priority\": 3}, {\"payload\": {}},"
                + " {\"payload\": {}, \"priority\": -2}]}")
        .post("/api/noop/batch")
        .then()
        .statusCode(202);
    assertThat(db.query("SELECT priority FROM jobs ORDER BY uid"))
        .extracting(r -> ((Number) r.get("priority")).intValue())
        .containsExactly(3, 0, -2);

    db.clearJobs();
    as(ALICE)
        .contentType(ContentType.JSON)
        .body(
            "{\"jobs\": [{\"payload\": {}}, {\"payload\": {}, \"priority\": 2},"
                + " {\"payload\": {}, \"priority\": \"high\"}]}")
        .post("/api/noop/batch")
        .then()
        .statusCode(400)
        .body("detail", containsString("nothing was enqueued"))
        .body("detail", containsString("jobs[1]: priority 2 is above"))
        .body("detail", containsString("jobs[2]: priority must be a whole number"));
    assertThat(db.query("SELECT uid FROM jobs")).isEmpty();
  }
}
