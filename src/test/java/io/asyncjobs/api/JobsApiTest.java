package io.asyncjobs.api;

import static io.asyncjobs.testing.Jobs.as;
import static io.asyncjobs.testing.Jobs.enqueueNoop;
import static io.asyncjobs.testing.Jobs.runAll;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.hamcrest.Matchers.endsWith;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;

import io.asyncjobs.kinds.noop.NoopService;
import io.asyncjobs.problem.Problem;
import io.asyncjobs.problem.ProblemException;
import io.asyncjobs.queue.JobQueue;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.RawHttp;
import io.asyncjobs.testing.Tokens;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.smallrye.jwt.build.Jwt;
import jakarta.inject.Inject;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@QuarkusTest
class JobsApiTest {

  static final String ALICE = Tokens.user("alice");
  static final String BOB = Tokens.user("bob");
  static final String ADMIN = Tokens.admin("root");

  @Inject Database db;
  @Inject NoopService noop;
  @Inject JobQueue queue;
  @Inject Enqueuer enqueuer;

  @TestHTTPResource("/")
  URI base;

  @BeforeEach
  void clean() {
    db.clearJobs();
  }

  @AfterEach
  void settle() throws InterruptedException {
    // Interrupt whatever a test left running, so the next one starts from an idle engine.
    db.update("UPDATE jobs SET cancel_requested = true WHERE status = 'running'");
    noop.runOnce();
    noop.awaitTasks(Duration.ofSeconds(10));
  }

  @Test
  void shouldAnswerAnEnqueueAt202WithLocationAndLinks() {
    Response response =
        as(ALICE).contentType(ContentType.JSON).body("{\"sleep_ms\": 5}").post("/api/noop");

    response
        .then()
        .statusCode(202)
        .body("status", equalTo("pending"))
        .body("kind", equalTo("noop"));
    String uid = response.path("uid");
    assertThat(response.header("Location")).endsWith("/api/jobs/" + uid);
    assertThat(response.<String>path("status_url")).isEqualTo("/api/jobs/" + uid);
    assertThat(response.<String>path("events_url")).isEqualTo("/api/jobs/" + uid + "/events");
    assertThat(
            db.query("SELECT owner_kind, owner_id FROM jobs WHERE uid = ?", UUID.fromString(uid)))
        .containsExactly(Map.of("owner_kind", "user", "owner_id", "alice"));
  }

  @Test
  void shouldTakeTheOwnerKindFromItsClaimAndDefaultWithoutOne() {
    String plain = Jwt.subject("carol").groups(Set.of("user")).expiresIn(3600).sign();
    String billing = Tokens.ofKind("service", "billing");

    String carols = enqueueNoop(plain, "{\"sleep_ms\": 5}");
    String billings = enqueueNoop(billing, "{\"sleep_ms\": 5}");

    assertThat(db.query("SELECT owner_kind FROM jobs WHERE uid = ?", UUID.fromString(carols)))
        .as("a token without the claim")
        .containsExactly(Map.of("owner_kind", "user"));
    assertThat(db.query("SELECT owner_kind FROM jobs WHERE uid = ?", UUID.fromString(billings)))
        .containsExactly(Map.of("owner_kind", "service"));
  }

  @Test
  void shouldShowStatusFromPendingToDoneWithASignedDownloadLinkButNoPath() throws Exception {
    String uid = enqueueNoop(ALICE, "{\"artifact_bytes\": 100, \"name\": \"hello.txt\"}");
    as(ALICE)
        .get("/api/jobs/" + uid)
        .then()
        .statusCode(200)
        .body("status", equalTo("pending"))
        .body("download_url", nullValue())
        .body("started_at", nullValue());

    runAll(noop);

    Response done = as(ALICE).get("/api/jobs/" + uid);
    done.then()
        .statusCode(200)
        .body("status", equalTo("done"))
        .body("preferred_name", equalTo("hello.txt"))
        .body("bytes_out", equalTo(100))
        .body("item_count", equalTo(1))
        .body("download_url", startsWith("/api/jobs/" + uid + "/download?expires="));
    assertThat(done.<Map<String, Object>>path("result")).doesNotContainKey("file");
    assertThat(done.asString()).doesNotContain("artifacts/noop");
  }

  @Test
  void shouldShowProgressAndAFailedJobsError() throws Exception {
    String failing = enqueueNoop(ALICE, "{\"fail\": \"disk full\"}");
    runAll(noop);
    as(ALICE)
        .get("/api/jobs/" + failing)
        .then()
        .body("status", equalTo("failed"))
        .body("error", equalTo("IllegalStateException: disk full"))
        .body("download_url", nullValue());

    String running = enqueueNoop(ALICE, "{\"sleep_ms\": 60000}");
    noop.runOnce();
    db.update(
        "UPDATE jobs SET progress = 0.25, progress_items = 3, progress_at = now() WHERE uid = ?",
        UUID.fromString(running));
    as(ALICE)
        .get("/api/jobs/" + running)
        .then()
        .body("status", equalTo("running"))
        .body("progress.fraction", equalTo(0.25f))
        .body("progress.items", equalTo(3));
  }

  @Test
  void shouldShowTheLastProgressOfAFinishedJob() throws Exception {
    // All three reports land between two ticks, so none is written while the job runs.
    String uid = enqueueNoop(ALICE, "{\"progress_steps\": 3}");
    runAll(noop);
    as(ALICE)
        .get("/api/jobs/" + uid)
        .then()
        .body("status", equalTo("done"))
        .body("progress.fraction", equalTo(1.0f))
        .body("progress.items", equalTo(3));
  }

  @Test
  void shouldApplyTheAuthMatrixToTheStatusRoute() {
    String uid = enqueueNoop(ALICE, "{}");
    String path = "/api/jobs/" + uid;

    as(ALICE).get(path).then().statusCode(200);
    as(ADMIN).get(path).then().statusCode(200).body("owner_id", equalTo("alice"));
    // Another owner's job looks exactly like a missing one.
    String missing = as(BOB).get(path).then().statusCode(404).extract().path("detail");
    assertThat(missing).isEqualTo("no job " + uid);
    as(BOB)
        .get("/api/jobs/" + UUID.randomUUID())
        .then()
        .statusCode(404)
        .contentType(Problem.MEDIA_TYPE);

    for (String bad : List.of(Tokens.expired("alice"), Tokens.signedByStranger("alice"), "x.y.z")) {
      as(bad)
          .get(path)
          .then()
          .statusCode(401)
          .contentType(Problem.MEDIA_TYPE)
          .header("WWW-Authenticate", startsWith("Bearer"))
          .body("type", equalTo("urn:async-jobs:problem:unauthenticated"));
    }
    // A name the holder may choose is no identity: without a subject the token owns nothing.
    as(Tokens.withoutSubject("alice"))
        .get("/api/jobs")
        .then()
        .statusCode(403)
        .contentType(Problem.MEDIA_TYPE)
        .body("detail", startsWith("the token needs a subject"));
    given()
        .get(path)
        .then()
        .statusCode(401)
        .contentType(Problem.MEDIA_TYPE)
        .header("WWW-Authenticate", startsWith("Bearer"));
  }

  @Test
  void shouldAnswerAnAdminWithoutASubjectA400ForABadBodyAndA403ForAGoodOneOnBothRoutes() {
    // The body is checked first, then who may own the job, as for every other token.
    String root = Tokens.adminWithoutSubject("root");
    as(root)
        .contentType(ContentType.JSON)
        .body("{\"sleep_ms\": \"long\"}")
        .post("/api/noop")
        .then()
        .statusCode(400);
    as(root)
        .contentType(ContentType.JSON)
        .body("{\"sleep_ms\": 0}")
        .post("/api/noop")
        .then()
        .statusCode(403)
        .body("detail", startsWith("the token needs a subject"));
    as(root)
        .contentType(ContentType.JSON)
        .body("{\"jobs\": [{\"payload\": {\"sleep_ms\": \"long\"}}]}")
        .post("/api/noop/batch")
        .then()
        .statusCode(400);
    as(root)
        .contentType(ContentType.JSON)
        .body("{\"jobs\": [{\"payload\": {\"sleep_ms\": 0}}, {\"payload\": {}}]}")
        .post("/api/noop/batch")
        .then()
        .statusCode(403)
        .body("detail", startsWith("the token needs a subject"));
    assertThat(db.query("SELECT uid FROM jobs")).isEmpty();
  }

  @Test
  void shouldRefuseEveryRouteWithoutAToken() {
    String uid = UUID.randomUUID().toString();
    given().get("/api/jobs").then().statusCode(401).contentType(Problem.MEDIA_TYPE);
    given().delete("/api/jobs/" + uid).then().statusCode(401);
    given().get("/api/jobs/" + uid + "/events").then().statusCode(401);
    given().get("/api/jobs/" + uid + "/download").then().statusCode(401);
    given().contentType(ContentType.JSON).body("{}").post("/api/noop").then().statusCode(401);
    given().get("/api/admin/services").then().statusCode(401);
    assertThat(db.query("SELECT uid FROM jobs")).isEmpty();
  }

  @Test
  void shouldListOnlyTheCallersJobsWithFiltersAndPages() throws Exception {
    String a1 = enqueueNoop(ALICE, "{}");
    String a2 = enqueueNoop(ALICE, "{\"fail\": true}");
    String a3 = enqueueNoop(ALICE, "{}");
    String b1 = enqueueNoop(BOB, "{}");
    runAll(noop);

    assertThat(as(ALICE).get("/api/jobs").<List<String>>path("jobs.uid"))
        .containsExactly(a3, a2, a1);
    assertThat(as(BOB).get("/api/jobs").<List<String>>path("jobs.uid")).containsExactly(b1);
    assertThat(as(ADMIN).get("/api/jobs").<List<String>>path("jobs.uid"))
        .containsExactly(b1, a3, a2, a1);
    assertThat(
            as(ALICE)
                .queryParam("status", "failed")
                .get("/api/jobs")
                .<List<String>>path("jobs.uid"))
        .containsExactly(a2);
    assertThat(as(ALICE).queryParam("kind", "noop").get("/api/jobs").<List<String>>path("jobs.uid"))
        .containsExactly(a3, a2, a1);
    assertThat(as(ALICE).queryParam("kind", "zip").get("/api/jobs").<List<String>>path("jobs.uid"))
        .isEmpty();

    Response first = as(ALICE).queryParam("limit", 2).get("/api/jobs");
    assertThat(first.<List<String>>path("jobs.uid")).containsExactly(a3, a2);
    String nextUrl = first.path("next_url");
    assertThat(nextUrl).isEqualTo("/api/jobs?before=" + a2 + "&limit=2");
    Response second = as(ALICE).get(nextUrl);
    assertThat(second.<List<String>>path("jobs.uid")).containsExactly(a1);
    assertThat(second.<String>path("next_url")).isNull();
  }

  @Test
  void shouldRefuseBadListFiltersWith400() {
    for (Map.Entry<String, String> bad :
        Map.of(
                "kind", "nosuchkind",
                "status", "finished",
                "limit", "0",
                "before", "not-a-uuid")
            .entrySet()) {
      as(ALICE)
          .queryParam(bad.getKey(), bad.getValue())
          .get("/api/jobs")
          .then()
          .statusCode(400)
          .contentType(Problem.MEDIA_TYPE)
          .body("type", equalTo("urn:async-jobs:problem:bad-request"))
          .body("status", equalTo(400))
          .body("detail", org.hamcrest.Matchers.containsString(bad.getKey()));
    }
    as(ALICE).queryParam("limit", "501").get("/api/jobs").then().statusCode(400);
    as(ALICE).queryParam("limit", "ten").get("/api/jobs").then().statusCode(400);
  }

  @Test
  void shouldCancelPendingAtOnceAndAskARunningJobToStop() throws Exception {
    String pending = enqueueNoop(ALICE, "{}");
    as(BOB).delete("/api/jobs/" + pending).then().statusCode(404);
    as(ALICE)
        .delete("/api/jobs/" + pending)
        .then()
        .statusCode(200)
        .body("status", equalTo("failed"))
        .body("error", equalTo("cancelled on request"));
    as(ALICE)
        .delete("/api/jobs/" + pending)
        .then()
        .statusCode(409)
        .contentType(Problem.MEDIA_TYPE)
        .body("type", equalTo("urn:async-jobs:problem:job-finished"));

    String running = enqueueNoop(ALICE, "{\"sleep_ms\": 60000}");
    noop.runOnce();
    as(ALICE)
        .delete("/api/jobs/" + running)
        .then()
        .statusCode(202)
        .body("status", equalTo("running"))
        .body("cancel_requested", equalTo(true));
    noop.runOnce();
    assertThat(noop.awaitTasks(Duration.ofSeconds(10))).isTrue();
    noop.runOnce();
    as(ALICE)
        .get("/api/jobs/" + running)
        .then()
        .body("status", equalTo("failed"))
        .body("error", equalTo("cancelled on request"));
  }

  @Test
  void shouldReturnTheFirstJobForARepeatedIdempotencyKey() {
    Response first =
        as(ALICE)
            .header("Idempotency-Key", "order-42")
            .contentType(ContentType.JSON)
            .body("{\"sleep_ms\": 1}")
            .post("/api/noop");
    first.then().statusCode(202);
    assertThat(first.header("Idempotent-Replayed")).isNull();

    Response again =
        as(ALICE)
            .header("Idempotency-Key", "order-42")
            .contentType(ContentType.JSON)
            .body("{\"sleep_ms\": 1.0}")
            .post("/api/noop");
    again.then().statusCode(202).header("Idempotent-Replayed", "true");
    assertThat(again.<String>path("uid")).isEqualTo(first.path("uid"));

    // Another owner's key space is its own.
    String bobs =
        as(BOB)
            .header("Idempotency-Key", "order-42")
            .contentType(ContentType.JSON)
            .body("{\"sleep_ms\": 1}")
            .post("/api/noop")
            .then()
            .statusCode(202)
            .extract()
            .path("uid");
    assertThat(bobs).isNotEqualTo(first.path("uid"));

    as(ALICE)
        .header("Idempotency-Key", "order-42")
        .contentType(ContentType.JSON)
        .body("{\"sleep_ms\": 2}")
        .post("/api/noop")
        .then()
        .statusCode(422)
        .contentType(Problem.MEDIA_TYPE)
        .body("type", equalTo("urn:async-jobs:problem:idempotency-key-reused"));
    as(ALICE)
        .header("Idempotency-Key", "has space")
        .contentType(ContentType.JSON)
        .body("{}")
        .post("/api/noop")
        .then()
        .statusCode(400);
    assertThat(db.query("SELECT uid FROM jobs")).hasSize(2);
  }

  @Test
  void shouldRefuseAnEmptyBlankOrOverlongIdempotencyKeyAndEnqueueNothing() throws Exception {
    byte[] body = "{\"sleep_ms\": 1}".getBytes(StandardCharsets.UTF_8);
    // As written on the wire: no value, a lone space, only blanks, a tab, 201 characters, and
    // two keys at once.
    for (String value :
        List.of("", " ", "    ", "\t", " " + "k".repeat(201), " a\r\nIdempotency-Key: b")) {
      String head =
          String.join(
              "\r\n",
              "POST /api/noop HTTP/1.1",
              "Host: " + base.getHost() + ":" + base.getPort(),
              "Authorization: Bearer " + ALICE,
              "Content-Type: application/json",
              "Content-Length: " + body.length,
              "Idempotency-Key:" + value);

      RawHttp.Answer answer = RawHttp.send(base, head, body, false);

      assertThat(answer.status())
          .as("Idempotency-Key:%s -> %s", value, answer.body())
          .isEqualTo(400);
      assertThat(answer.headers().get("content-type")).startsWith(Problem.MEDIA_TYPE);
      assertThat(answer.body())
          .contains("\"type\":\"urn:async-jobs:problem:bad-request\"", "Idempotency-Key");
    }
    assertThat(db.query("SELECT uid FROM jobs")).isEmpty();
  }

  @Test
  void shouldAnswerEveryBadRequestWithAProblemAndWriteNothing() {
    record Bad(String contentType, String body, int status, String type) {}
    List<Bad> bad =
        List.of(
            new Bad("application/json", "{\"sleep_ms\": ", 400, "malformed-body"),
            new Bad("application/json", "[1, 2]", 400, "malformed-body"),
            new Bad("application/json", "\"text\"", 400, "malformed-body"),
            new Bad("application/json", "{\"sleep_ms\": \"soon\"}", 400, "bad-request"),
            new Bad("application/json", "{\"colour\": \"red\"}", 400, "bad-request"),
            new Bad("application/json", "{\"artifact_bytes\": -1}", 400, "bad-request"),
            // PostgreSQL cannot store U+0000: refused up front, not a 500 from the database.
            new Bad("application/json", "{\"name\": \"a\\u0000b\"}", 400, "bad-request"),
            new Bad("application/json", "{\"fail\": \"\\u0000\"}", 400, "bad-request"),
            new Bad("text/plain", "{}", 415, "unsupported-media-type"),
            new Bad(
                "application/json",
                "{\"name\": \"" + "x".repeat(2_000_000) + "\"}",
                413,
                "body-too-large"));
    for (Bad b : bad) {
      as(ALICE)
          .contentType(b.contentType())
          .body(b.body())
          .post("/api/noop")
          .then()
          .statusCode(b.status())
          .contentType(Problem.MEDIA_TYPE)
          .body("type", equalTo("urn:async-jobs:problem:" + b.type()))
          .body("title", org.hamcrest.Matchers.notNullValue())
          .body("detail", org.hamcrest.Matchers.notNullValue());
    }
    as(ALICE)
        .contentType(ContentType.JSON)
        .body("{}")
        .post("/api/nosuchkind")
        .then()
        .statusCode(404)
        .contentType(Problem.MEDIA_TYPE);
    as(ALICE)
        .get("/api/jobs/not-a-uid")
        .then()
        .statusCode(400)
        .contentType(Problem.MEDIA_TYPE)
        .body("detail", startsWith("uid must be a uuid"));
    as(ALICE).get("/api/jobs/1-1-1-1-1").then().statusCode(400);
    as(ALICE)
        .put("/api/jobs")
        .then()
        .statusCode(405)
        .contentType(Problem.MEDIA_TYPE)
        .header("Allow", "GET, HEAD");
    assertThat(db.query("SELECT uid FROM jobs")).isEmpty();
  }

  @Test
  void shouldAnswerOtherMethodsAndOtherRoutesBesideTheKindsRouteAsBefore() {
    // The other /api routes answer as they do alone: 405 for a method /api/jobs lacks, and 404
    // for /api/admin, which is no route by itself.
    as(ALICE)
        .contentType(ContentType.JSON)
        .body("{}")
        .post("/api/jobs")
        .then()
        .statusCode(405)
        .contentType(Problem.MEDIA_TYPE)
        .header("Allow", "GET, HEAD")
        .body("type", equalTo("urn:async-jobs:problem:method-not-allowed"));
    // RFC 9110: a 405 names the methods the route takes, on every route (docs/api.md says so).
    as(ALICE)
        .post("/api/jobs/" + UUID.randomUUID())
        .then()
        .statusCode(405)
        .header("Allow", "DELETE, GET, HEAD");
    as(ADMIN).get("/api/admin/services/zip/pause").then().statusCode(405).header("Allow", "POST");
    as(ADMIN)
        .delete("/api/admin/services/zip/settings")
        .then()
        .statusCode(405)
        .header("Allow", "GET, HEAD, PUT");
    as(ALICE)
        .contentType(ContentType.JSON)
        .body("{}")
        .post("/api/admin")
        .then()
        .statusCode(404)
        .body("type", equalTo("urn:async-jobs:problem:not-found"));
    // A kind's route takes POST only, with or without a token.
    given()
        .get("/api/zip")
        .then()
        .statusCode(405)
        .header("Allow", "POST")
        .contentType(Problem.MEDIA_TYPE);
    as(ALICE).delete("/api/noop").then().statusCode(405).header("Allow", "POST");
    // A word that is no kind and no route is no route at all.
    for (String method : List.of("GET", "PUT", "DELETE", "PATCH")) {
      given()
          .request(method, "/api/nosuchroute")
          .then()
          .statusCode(404)
          .contentType(Problem.MEDIA_TYPE)
          .body("type", equalTo("urn:async-jobs:problem:not-found"));
    }
    as(ALICE)
        .contentType(ContentType.JSON)
        .body("{}")
        .post("/api/nosuchkind")
        .then()
        .statusCode(404)
        .body("type", equalTo("urn:async-jobs:problem:unknown-kind"));
    assertThat(db.query("SELECT uid FROM jobs")).isEmpty();
  }

  @Test
  void shouldKeepEnqueueEndpointsToEnabledKinds() {
    // The test profile registers noop and disables "disabledkind".
    as(ALICE).contentType(ContentType.JSON).body("{}").post("/api/noop").then().statusCode(202);
    assertThatThrownBy(() -> enqueuer.requireEnabled("disabledkind"))
        .isInstanceOfSatisfying(
            ProblemException.class,
            e -> {
              assertThat(e.problem().status()).isEqualTo(404);
              assertThat(e.problem().type()).isEqualTo("urn:async-jobs:problem:unknown-kind");
              assertThat(e.problem().detail()).contains("disabledkind");
            });
    as(ALICE)
        .get("/api/jobs?kind=disabledkind")
        .then()
        .statusCode(400)
        .body("detail", endsWith("\"disabledkind\""));
    assertThat(db.query("SELECT uid FROM jobs")).hasSize(1);
  }
}
