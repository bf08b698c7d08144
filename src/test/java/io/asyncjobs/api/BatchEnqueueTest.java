package io.asyncjobs.api;

import static io.asyncjobs.testing.Jobs.as;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.not;

import io.asyncjobs.kinds.noop.NoopService;
import io.asyncjobs.problem.Problem;
import io.asyncjobs.storage.DataDirectory;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code POST /api/<kind>/batch}: many jobs in one transaction, one result per job. */
@QuarkusTest
class BatchEnqueueTest {

  static final String ALICE = Tokens.user("alice");
  static final String BOB = Tokens.user("bob");

  @Inject Database db;
  @Inject NoopService noop;
  @Inject DataDirectory data;

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

  private static Response batch(String token, String kind, String body) {
    return as(token).contentType(ContentType.JSON).body(body).post("/api/" + kind + "/batch");
  }

  private static String jobs(int n) {
    return IntStream.range(0, n)
        .mapToObj(i -> "{\"payload\": {\"sleep_ms\": " + i + "}}")
        .collect(Collectors.joining(", ", "{\"jobs\": [", "]}"));
  }

  @Test
  void shouldEnqueueEveryJobInOrderAndAnswerOneResultEach() {
    Response response = batch(ALICE, "noop", jobs(1000));

    response.then().statusCode(202);
    List<Map<String, Object>> results = response.path("jobs");
    assertThat(results).hasSize(1000);
    List<Map<String, Object>> rows =
        db.query(
            "SELECT uid, payload->>'sleep_ms' AS sleep, owner_id, status FROM jobs ORDER BY uid");
    assertThat(rows).hasSize(1000);
    for (int i = 0; i < 1000; i++) {
      Map<String, Object> result = results.get(i);
      String uid = (String) result.get("uid");
      assertThat(result)
          .containsOnlyKeys("uid", "kind", "status", "status_url", "events_url", "replayed")
          .containsEntry("kind", "noop")
          .containsEntry("status", "pending")
          .containsEntry("replayed", false)
          .containsEntry("status_url", "/api/jobs/" + uid)
          .containsEntry("events_url", "/api/jobs/" + uid + "/events");
      // The uids keep the batch's order, so the jobs are claimed in the order sent.
      assertThat(rows.get(i))
          .containsEntry("uid", UUID.fromString(uid))
          .containsEntry("sleep", String.valueOf(i))
          .containsEntry("owner_id", "alice")
          .containsEntry("status", "pending");
    }
    as(ALICE).get("/api/jobs/" + results.get(999).get("uid")).then().statusCode(200);
  }

  @Test
  void shouldRefuseTheWholeBatchNamingEachRefusedJobAndEnqueueNothing() {
    batch(
            ALICE,
            "noop",
            "{\"jobs\": [{\"payload\": {\"sleep_ms\": 1}}, {\"payload\": {\"nope\": 1}},"
                + " {\"payload\": {\"sleep_ms\": 2}}, {\"payload\": {\"sleep_ms\": -5}}]}")
        .then()
        .statusCode(400)
        .contentType(Problem.MEDIA_TYPE)
        .body("type", equalTo("urn:async-jobs:problem:bad-request"))
        .body("detail", containsString("nothing was enqueued"))
        .body("detail", containsString("jobs[1]: unknown field nope"))
        .body("detail", containsString("jobs[3]: "))
        .body("detail", not(containsString("jobs[0]")))
        .body("detail", not(containsString("jobs[2]")));
    assertThat(db.query("SELECT uid FROM jobs")).isEmpty();
  }

  @Test
  void shouldRefuseMalformedBatchesWithAProblemAndEnqueueNothing() {
    for (String body :
        List.of(
            "{}",
            "{\"jobs\": []}",
            "{\"jobs\": {}}",
            "{\"jobs\": [{\"sleep_ms\": 1}]}",
            "{\"jobs\": [{\"payload\": 1}]}",
            "{\"jobs\": [{\"payload\": {}, \"extra\": 1}]}",
            "{\"jobs\": [{\"payload\": {}}], \"more\": true}",
            "{\"jobs\": [{\"payload\": {}, \"idempotency_key\": \"has space\"}]}",
            "{\"jobs\": [{\"payload\": {}, \"idempotency_key\": 7}]}",
            "{\"jobs\": [{\"payload\": {}, \"idempotency_key\": \"a\"},"
                + " {\"payload\": {}, \"idempotency_key\": \"a\"}]}",
            jobs(1001))) {
      batch(ALICE, "noop", body)
          .then()
          .statusCode(400)
          .contentType(Problem.MEDIA_TYPE)
          .body("type", equalTo("urn:async-jobs:problem:bad-request"));
    }
    as(ALICE).contentType(ContentType.JSON).post("/api/noop/batch").then().statusCode(400);
    batch(ALICE, "noop", "[]")
        .then()
        .statusCode(400)
        .body("type", equalTo("urn:async-jobs:problem:malformed-body"));
    assertThat(db.query("SELECT uid FROM jobs")).isEmpty();
  }

  @Test
  void shouldReplayKeysUsedBeforeForTheSameRequestAndRefuseTheBatchForAnother() {
    String single =
        as(ALICE)
            .header("Idempotency-Key", "order-1")
            .contentType(ContentType.JSON)
            .body("{\"sleep_ms\": 1}")
            .post("/api/noop")
            .then()
            .statusCode(202)
            .extract()
            .path("uid");

    Response response =
        batch(
            ALICE,
            "noop",
            "{\"jobs\": [{\"payload\": {\"sleep_ms\": 1.0}, \"idempotency_key\": \"order-1\"},"
                + " {\"payload\": {\"sleep_ms\": 2}, \"idempotency_key\": \"order-2\"},"
                + " {\"payload\": {\"sleep_ms\": 3}}]}");
    response.then().statusCode(202);
    assertThat(response.<String>path("jobs[0].uid")).isEqualTo(single);
    assertThat(response.<Boolean>path("jobs[0].replayed")).isTrue();
    assertThat(response.<Boolean>path("jobs[1].replayed")).isFalse();
    String second = response.path("jobs[1].uid");
    assertThat(db.query("SELECT uid FROM jobs")).hasSize(3);

    // The whole batch again: every keyed job is replayed, the unkeyed one is new.
    Response again =
        batch(
            ALICE,
            "noop",
            "{\"jobs\": [{\"payload\": {\"sleep_ms\": 1}, \"idempotency_key\": \"order-1\"},"
                + " {\"payload\": {\"sleep_ms\": 2}, \"idempotency_key\": \"order-2\"}]}");
    again.then().statusCode(202);
    assertThat(again.<List<String>>path("jobs.uid")).containsExactly(single, second);
    assertThat(again.<List<Boolean>>path("jobs.replayed")).containsExactly(true, true);
    assertThat(db.query("SELECT uid FROM jobs")).hasSize(3);

    // A used key for another payload refuses the batch, new jobs included.
    batch(
            ALICE,
            "noop",
            "{\"jobs\": [{\"payload\": {\"sleep_ms\": 9}, \"idempotency_key\": \"order-3\"},"
                + " {\"payload\": {\"sleep_ms\": 5}, \"idempotency_key\": \"order-2\"}]}")
        .then()
        .statusCode(422)
        .contentType(Problem.MEDIA_TYPE)
        .body("type", equalTo("urn:async-jobs:problem:idempotency-key-reused"))
        .body("detail", containsString("jobs[1]"))
        .body("detail", containsString(second));
    assertThat(db.query("SELECT uid FROM jobs")).hasSize(3);

    // Another owner's keys are its own.
    batch(
            BOB,
            "noop",
            "{\"jobs\": [{\"payload\": {\"sleep_ms\": 4}, \"idempotency_key\": \"order-2\"}]}")
        .then()
        .statusCode(202)
        .body("jobs[0].replayed", equalTo(false))
        .body("jobs[0].uid", not(equalTo(second)));
  }

  @Test
  void shouldCheckEachPayloadAgainstTheCallersFolderAndRecordItsScope() throws IOException {
    Path folder = data.root().resolve("files/user/alice");
    Files.createDirectories(folder.resolve("docs"));
    Files.writeString(folder.resolve("docs/a.txt"), "invoice overdue");

    Response response =
        batch(
            ALICE,
            "deepsearch",
            "{\"jobs\": [{\"payload\": {\"root\": \"docs\", \"query\": \"invoice\"}},"
                + " {\"payload\": {\"root\": \"docs\", \"query\": \"overdue\"}}]}");
    response.then().statusCode(202);
    assertThat(db.query("SELECT payload->>'scope' AS scope FROM jobs"))
        .hasSize(2)
        .allSatisfy(row -> assertThat(row.get("scope")).isNotNull());

    batch(
            ALICE,
            "deepsearch",
            "{\"jobs\": [{\"payload\": {\"root\": \"docs\", \"query\": \"x\"}},"
                + " {\"payload\": {\"root\": \"../bob\", \"query\": \"x\"}}]}")
        .then()
        .statusCode(400)
        .body("detail", containsString("jobs[1]: "));
    assertThat(db.query("SELECT uid FROM jobs")).hasSize(2);
  }

  @Test
  void shouldAnswerAnUnknownKindA404AndNoTokenA401() {
    batch(ALICE, "nosuchkind", jobs(1))
        .then()
        .statusCode(404)
        .body("type", equalTo("urn:async-jobs:problem:unknown-kind"));
    RestAssured.given()
        .contentType(ContentType.JSON)
        .body(jobs(1))
        .post("/api/noop/batch")
        .then()
        .statusCode(401);
    assertThat(db.query("SELECT uid FROM jobs")).isEmpty();
  }
}
