package io.asyncjobs.api;

import static io.asyncjobs.testing.Jobs.as;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import io.asyncjobs.problem.Problem;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.ValidatableResponse;
import jakarta.inject.Inject;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Bulk cancel and retry through the admin API against the real database: exact counts, batches of
 * 1,000, the jobs outside the filter untouched, and the refusals a caller can fix.
 */
@QuarkusTest
class BulkApiTest {

  static final String ADMIN = Tokens.admin("root");
  private static final Instant DAY1 = Instant.parse("2026-04-01T00:00:00Z");
  private static final Instant DAY2 = Instant.parse("2026-04-02T00:00:00Z");

  @Inject Database db;

  @BeforeEach
  void clean() {
    db.clearJobs();
  }

  @Test
  void shouldCountInADryRunThenCancelExactlyTheMatchingJobsInBatches() {
    insert("noop", "pending", "alice", DAY1, 2_490);
    insert("noop", "running", "alice", DAY1, 10);
    insert("noop", "pending", "bob", DAY1, 30); // another owner
    insert("zip", "pending", "alice", DAY1, 20); // another kind
    insert("noop", "done", "alice", DAY1, 5); // finished: nothing to cancel
    String filter = "{\"kind\": \"noop\", \"owner_kind\": \"user\", \"owner_id\": \"alice\"";

    bulk("cancel", filter + ", \"dry_run\": true}")
        .statusCode(200)
        .body("matched", equalTo(2_500))
        .body("affected", equalTo(0))
        .body("dry_run", equalTo(true))
        .body("batches", equalTo(4)); // 2,490 pending in 3 batches, then 10 running in 1
    assertThat(count("status = 'pending' AND owner_id = 'alice' AND kind = 'noop'"))
        .isEqualTo(2_490);
    assertThat(count("cancel_requested")).isZero();

    bulk("cancel", filter + "}")
        .statusCode(200)
        .body("matched", equalTo(2_500))
        .body("affected", equalTo(2_500))
        .body("dry_run", equalTo(false))
        .body("batches", equalTo(4));

    // As the single cancel: pending ones failed at once, running ones asked to stop.
    assertThat(
            count(
                "kind = 'noop' AND owner_id = 'alice' AND status = 'failed'"
                    + " AND error = 'cancelled on request' AND completed_at IS NOT NULL"))
        .isEqualTo(2_490);
    assertThat(
            count(
                "kind = 'noop' AND owner_id = 'alice' AND status = 'running' AND cancel_requested"))
        .isEqualTo(10);
    assertThat(count("owner_id = 'bob' AND status = 'pending' AND NOT cancel_requested"))
        .isEqualTo(30);
    assertThat(count("kind = 'zip' AND status = 'pending' AND NOT cancel_requested")).isEqualTo(20);
    assertThat(count("status = 'done' AND NOT cancel_requested")).isEqualTo(5);

    // Again: the running ones were already asked to stop, so nothing more is affected (a job
    // claimed between the pending and the running walk is likewise not counted twice).
    bulk("cancel", filter + "}")
        .statusCode(200)
        .body("matched", equalTo(10))
        .body("affected", equalTo(0));
  }

  /**
   * A job a cancel asked to stop that went back to pending (as a running job whose attempt lost the
   * database did before the put-back checked the cancel) is cancelled by a bulk cancel, not passed
   * over as one already asked to stop.
   */
  @Test
  void shouldCancelAPendingJobThoughAnEarlierCancelAskedItToStop() {
    insert("noop", "pending", "alice", DAY1, 2);
    db.update("UPDATE jobs SET cancel_requested = true, retry_count = 1");

    bulk("cancel", "{\"kind\": \"noop\"}")
        .statusCode(200)
        .body("matched", equalTo(2))
        .body("affected", equalTo(2));

    assertThat(count("status = 'failed' AND error = 'cancelled on request'")).isEqualTo(2);
  }

  /**
   * Jobs of a kind this replica does not run (disabled here, or retired since) are still jobs of
   * the table: "all" and a kind filter reach them, as another replica's or the next release's owner
   * would otherwise run what the admin meant to cancel.
   */
  @Test
  void shouldActOnJobsOfAKindThisReplicaDoesNotRun() {
    insert("noop", "pending", "alice", DAY1, 2);
    insert("elsewhere", "pending", "alice", DAY1, 3);
    insert("elsewhere", "failed", "alice", DAY1, 4);

    bulk("cancel", "{\"all\": true, \"dry_run\": true}")
        .statusCode(200)
        .body("matched", equalTo(5));
    bulk("cancel", "{\"all\": true}").statusCode(200).body("affected", equalTo(5));
    bulk("retry", "{\"kind\": \"elsewhere\"}").statusCode(200).body("affected", equalTo(7));

    assertThat(count("kind = 'elsewhere' AND status = 'pending'")).isEqualTo(7);
    assertThat(count("kind = 'noop' AND status = 'failed'")).isEqualTo(2);
  }

  @Test
  void shouldRetryOnlyTheFailedJobsCreatedInTheWindowAndWakeNobodyElse() {
    insert("noop", "failed", "alice", DAY1, 1_200);
    insert("noop", "failed", "alice", DAY2, 7); // outside the window
    insert("noop", "pending", "alice", DAY1, 3); // not failed
    String window =
        "{\"kind\": \"noop\", \"created_after\": \"2026-03-31T12:00:00Z\","
            + " \"created_before\": \"2026-04-01T12:00:00+00:00\"";
    double retriedBefore = retriedTotal();

    bulk("retry", window + ", \"dry_run\": true}")
        .statusCode(200)
        .body("matched", equalTo(1_200))
        .body("affected", equalTo(0))
        .body("batches", equalTo(2));
    assertThat(count("status = 'failed'")).isEqualTo(1_207);

    bulk("retry", window + "}")
        .statusCode(200)
        .body("matched", equalTo(1_200))
        .body("affected", equalTo(1_200))
        .body("batches", equalTo(2));

    assertThat(count("status = 'pending' AND created_at = '" + DAY1 + "'")).isEqualTo(1_203);
    assertThat(count("status = 'failed' AND created_at = '" + DAY2 + "'")).isEqualTo(7);
    assertThat(retriedTotal() - retriedBefore).isEqualTo(1_200);
  }

  @Test
  void shouldResetARetriedJobExactlyAsTheSingleRetryDoes() {
    insert("noop", "failed", "single", DAY1, 1);
    insert("noop", "failed", "bulk", DAY1, 1);
    db.update(
        "UPDATE jobs SET error = 'boom', result = '{\"partial\": 1}', retry_count = 2,"
            + " started_at = ?, completed_at = ?, duration_ms = 1500, bytes_in = 10,"
            + " bytes_out = 20, item_count = 3, progress = 0.5, progress_items = 4,"
            + " progress_at = ?, cancel_requested = true",
        Timestamp.from(DAY1),
        Timestamp.from(DAY1),
        Timestamp.from(DAY1));
    Map<String, Object> single = row("single");
    Map<String, Object> bulk = row("bulk");

    as(ADMIN).post("/api/admin/jobs/" + single.get("uid") + "/retry").then().statusCode(200);
    bulk("retry", "{\"owner_kind\": \"user\", \"owner_id\": \"bulk\"}")
        .statusCode(200)
        .body("affected", equalTo(1));

    Map<String, Object> singleAfter = row("single");
    Map<String, Object> bulkAfter = row("bulk");
    assertThat(bulkAfter.get("uid")).as("the uid is kept").isEqualTo(bulk.get("uid"));
    for (String column : singleAfter.keySet()) {
      if (List.of("uid", "owner_id", "updated_at", "expires_at").contains(column)) {
        continue;
      }
      assertThat(bulkAfter.get(column)).as(column).isEqualTo(singleAfter.get(column));
    }
    assertThat(bulkAfter.get("status")).isEqualTo("pending");
    assertThat(bulkAfter.get("error")).isNull();
    assertThat(bulkAfter.get("retry_count")).isEqualTo(0);
    assertThat(bulkAfter.get("cancel_requested")).isEqualTo(false);
  }

  @Test
  void shouldRefuseFiltersACallerMustFixAndChangeNothing() {
    insert("noop", "pending", "alice", DAY1, 3);
    refused("cancel", "{}", "give at least one filter");
    refused("cancel", "{\"dry_run\": true}", "\"all\": true");
    refused("cancel", "{\"all\": false}", "give at least one filter");
    refused("cancel", "{\"kind\": \"nosuch\"}", "kind must be one of");
    refused(
        "cancel",
        "{\"kind\": \"noop\", \"status\": \"done\"}",
        "status for a cancel must be pending or running; got \"done\"");
    refused("retry", "{\"status\": \"pending\"}", "status for a retry must be failed");
    refused("cancel", "{\"created_before\": \"yesterday\"}", "created_before must be an RFC 3339");
    refused("cancel", "{\"created_after\": \"2026-04-01T00:00:00\"}", "created_after must be");
    refused(
        "cancel",
        "{\"created_after\": \"2026-04-02T00:00:00Z\", \"created_before\": \"2026-04-01T00:00:00Z\"}",
        "created_after must be before created_before");
    refused("cancel", "{\"owner_kind\": \"user\"}", "owner_kind and owner_id filter together");
    refused("cancel", "{\"kind\": \"noop\", \"everything\": true}", "unknown field \"everything\"");
    refused("retry", "{\"kind\": 5}", "kind");
    as(JobsApiTest.ALICE)
        .contentType(ContentType.JSON)
        .body("{\"all\": true}")
        .post("/api/admin/jobs/cancel")
        .then()
        .statusCode(403)
        .contentType(Problem.MEDIA_TYPE);
    assertThat(count("status = 'pending' AND NOT cancel_requested")).isEqualTo(3);

    bulk("cancel", "{\"all\": true}").statusCode(200).body("affected", equalTo(3));
  }

  // ---- helpers ---------------------------------------------------------------------------

  private static ValidatableResponse bulk(String action, String body) {
    return as(ADMIN)
        .contentType(ContentType.JSON)
        .body(body)
        .post("/api/admin/jobs/" + action)
        .then();
  }

  private static void refused(String action, String body, String detail) {
    bulk(action, body)
        .statusCode(400)
        .contentType(Problem.MEDIA_TYPE)
        .body("detail", containsString(detail));
  }

  private void insert(String kind, String status, String owner, Instant created, int n) {
    db.update(
        "INSERT INTO jobs (uid, kind, status, owner_kind, owner_id, payload, created_at,"
            + " updated_at, expires_at, started_at)"
            + " SELECT gen_random_uuid(), ?, ?, 'user', ?, '{}', ?, ?, now() + interval '7 days',"
            + " CASE WHEN ? = 'running' THEN now() END FROM generate_series(1, ?)",
        kind,
        status,
        owner,
        Timestamp.from(created),
        Timestamp.from(created),
        status,
        n);
  }

  private long count(String where) {
    return ((Number) db.query("SELECT count(*) AS n FROM jobs WHERE " + where).get(0).get("n"))
        .longValue();
  }

  private Map<String, Object> row(String owner) {
    return db.query("SELECT * FROM jobs WHERE owner_id = ?", owner).get(0);
  }

  private static double retriedTotal() {
    String text =
        io.restassured.RestAssured.given()
            .header("Accept", "text/plain; version=0.0.4")
            .get("/q/metrics")
            .then()
            .statusCode(200)
            .extract()
            .asString();
    Matcher m =
        Pattern.compile("(?m)^jobs_retried_total\\{[^}]*kind=\"noop\"[^}]*} (\\S+)").matcher(text);
    return m.find() ? Double.parseDouble(m.group(1)) : 0;
  }
}
