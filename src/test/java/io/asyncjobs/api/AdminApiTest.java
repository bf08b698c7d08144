package io.asyncjobs.api;

import static io.asyncjobs.testing.Jobs.as;
import static io.asyncjobs.testing.Jobs.enqueueNoop;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.nullValue;

import io.asyncjobs.kinds.noop.NoopService;
import io.asyncjobs.problem.Problem;
import io.asyncjobs.settings.SettingsOverride;
import io.asyncjobs.settings.SettingsStore;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@QuarkusTest
class AdminApiTest {

  static final String ADMIN = Tokens.admin("root");

  @Inject Database db;
  @Inject NoopService noop;
  @Inject SettingsStore settings;

  @BeforeEach
  void clean() {
    db.clearJobs();
  }

  @AfterEach
  void resetSettings() {
    settings.update("noop", SettingsOverride.NONE);
  }

  @Test
  void shouldShowWhoOwnsEachShardOfAServiceAndSinceWhen() {
    io.asyncjobs.lock.OwnerLock lock =
        io.quarkus.arc.Arc.container().instance(io.asyncjobs.lock.OwnerLock.class).get();
    var card = as(ADMIN).get("/api/admin/services").then().statusCode(200).extract().jsonPath();
    String prefix = "find { it.service == 'noop' }.shards[0].";
    assertThat(card.<String>get(prefix + "shard")).isEqualTo("all");
    assertThat(card.<String>get(prefix + "lock")).isEqualTo("async-jobs-owner");
    assertThat(card.<String>get(prefix + "holder")).isEqualTo(lock.identity());
    assertThat(card.<Boolean>get(prefix + "owned_here")).isTrue();
    assertThat(card.<Number>get(prefix + "epoch").longValue()).isEqualTo(lock.epoch());
    assertThat(card.<String>get(prefix + "since")).isNotBlank();
    assertThat(card.<List<Object>>get("find { it.service == 'noop' }.shards")).hasSize(1);
  }

  @Test
  void shouldRefuseAdminRoutesToCallersWithoutTheRole() {
    for (String path : List.of("/api/admin/services", "/api/admin/jobs")) {
      as(JobsApiTest.ALICE)
          .get(path)
          .then()
          .statusCode(403)
          .contentType(Problem.MEDIA_TYPE)
          .body("type", equalTo("urn:async-jobs:problem:forbidden"));
    }
    as(JobsApiTest.ALICE)
        .contentType(ContentType.JSON)
        .body("{\"max_concurrent\": 1}")
        .put("/api/admin/services/noop/settings")
        .then()
        .statusCode(403);
    assertThat(settings.overrides("noop")).isEqualTo(SettingsOverride.NONE);
  }

  @Test
  void shouldReadAndReplaceAServicesSettings() {
    as(ADMIN)
        .get("/api/admin/services/noop/settings")
        .then()
        .statusCode(200)
        .body("service", equalTo("noop"))
        .body("configured.retention_seconds", equalTo(604800))
        .body("overrides.max_concurrent", nullValue())
        .body("effective.max_concurrent", equalTo(4));

    as(ADMIN)
        .contentType(ContentType.JSON)
        .body("{\"retention_seconds\": 120, \"max_concurrent\": 2}")
        .put("/api/admin/services/noop/settings")
        .then()
        .statusCode(200)
        .body("overrides.max_concurrent", equalTo(2))
        .body("effective.max_concurrent", equalTo(2))
        .body("effective.retention_seconds", equalTo(120))
        .body("configured.retention_seconds", equalTo(604800));
    assertThat(settings.effective("noop").maxConcurrent()).isEqualTo(2);
    assertThat(as(ADMIN).get("/api/admin/services").<List<String>>path("service")).contains("noop");

    as(ADMIN)
        .contentType(ContentType.JSON)
        .body("{}")
        .put("/api/admin/services/noop/settings")
        .then()
        .statusCode(200)
        .body("effective.max_concurrent", equalTo(4));
  }

  @Test
  void shouldShowACardPerServiceWithCountsRatesDurationsAndBytes() throws Exception {
    enqueueNoop(JobsApiTest.ALICE, "{\"artifact_bytes\": 300}");
    enqueueNoop(JobsApiTest.ALICE, "{\"fail\": true}");
    enqueueNoop(JobsApiTest.BOB, "{}");
    noop.runOnce();
    assertThat(noop.awaitTasks(Duration.ofSeconds(10))).isTrue();
    noop.runOnce();
    enqueueNoop(JobsApiTest.BOB, "{}"); // still pending
    db.update(
        "UPDATE jobs SET created_at = now() - interval '90 seconds' WHERE status = 'pending'");

    io.restassured.response.Response cards = as(ADMIN).get("/api/admin/services");
    cards.then().statusCode(200);
    String card = "find { it.service == 'noop' }";
    assertThat(cards.<String>path(card + ".title")).isEqualTo("No-op (diagnostics)");
    assertThat(cards.<Integer>path(card + ".counts.done")).isEqualTo(2);
    assertThat(cards.<Integer>path(card + ".counts.failed")).isEqualTo(1);
    assertThat(cards.<Integer>path(card + ".counts.pending")).isEqualTo(1);
    assertThat(cards.<Integer>path(card + ".completed_last_hour")).isEqualTo(3);
    List<Integer> perMinute = cards.path(card + ".per_minute");
    assertThat(perMinute).hasSize(60);
    assertThat(perMinute.stream().mapToInt(Integer::intValue).sum()).isEqualTo(3);
    assertThat(cards.<Float>path(card + ".duration_ms.p50")).isNotNull();
    assertThat(cards.<Integer>path(card + ".bytes_out")).isEqualTo(300);
    assertThat(cards.<Integer>path(card + ".items")).isEqualTo(2);
    assertThat(cards.<Integer>path(card + ".oldest_pending_age_seconds")).isBetween(85, 200);
    assertThat(cards.<Integer>path(card + ".settings.effective.max_concurrent")).isEqualTo(4);
    // A kind without jobs still has its card, with zeros.
    assertThat(cards.<Integer>path("find { it.service == 'zip' }.counts.done")).isZero();
  }

  @Test
  void shouldNameTheSettingOutOfRangeAndNoJavaClass() {
    as(ADMIN)
        .contentType(ContentType.JSON)
        .body("{\"max_concurrent\": 0}")
        .put("/api/admin/services/noop/settings")
        .then()
        .statusCode(400)
        .body("type", equalTo("urn:async-jobs:problem:malformed-body"))
        .body(
            "detail",
            equalTo("the body has an invalid value: max_concurrent must be between 1 and 256"));
  }

  @Test
  void shouldNameTheUnknownOrMistypedFieldAndNoJavaType() {
    as(ADMIN)
        .contentType(ContentType.JSON)
        .body("{\"colour\": \"red\"}")
        .put("/api/admin/services/noop/settings")
        .then()
        .statusCode(400)
        .body("type", equalTo("urn:async-jobs:problem:malformed-body"))
        .body(
            "detail",
            equalTo(
                "the body has an unknown field \"colour\"; the fields are claim_order,"
                    + " job_timeout_seconds, max_attempts, max_concurrent, max_pending_per_owner,"
                    + " max_retries, max_running_per_owner, retention_seconds"));
    as(ADMIN)
        .contentType(ContentType.JSON)
        .body("{\"max_concurrent\": \"many\"}")
        .put("/api/admin/services/noop/settings")
        .then()
        .statusCode(400)
        .body("detail", equalTo("the body's max_concurrent must be a whole number"));
    as(JobsApiTest.ALICE)
        .contentType(ContentType.JSON)
        .body("{\"paths\": \"docs\"}")
        .post("/api/zip")
        .then()
        .statusCode(400)
        .body("detail", not(containsString("java")))
        .body("detail", not(containsString("io.asyncjobs")));
  }

  @Test
  void shouldRefuseBadSettingsAndLeaveTheOldOnes() {
    settings.update("noop", new SettingsOverride(null, 3, null, null));
    for (String body :
        List.of(
            "{\"max_concurrent\": 0}",
            "{\"max_concurrent\": \"many\"}",
            "{\"retention_seconds\": -5}",
            "{\"max_retries\": 101}",
            // Past timestamp arithmetic's range: every completion of the kind would fail.
            "{\"retention_seconds\": 10000000000000}",
            "{\"job_timeout_seconds\": 315360001}",
            "{\"colour\": \"red\"}",
            "{\"max_concurrent\": ")) {
      as(ADMIN)
          .contentType(ContentType.JSON)
          .body(body)
          .put("/api/admin/services/noop/settings")
          .then()
          .statusCode(400)
          .contentType(Problem.MEDIA_TYPE);
    }
    as(ADMIN)
        .contentType(ContentType.JSON)
        .body("{}")
        .put("/api/admin/services/nosuch/settings")
        .then()
        .statusCode(404)
        .contentType(Problem.MEDIA_TYPE);
    assertThat(settings.effective("noop").maxConcurrent()).isEqualTo(3);
  }

  @Test
  void shouldListEveryOwnersJobsFilteredByOwner() {
    String alices = enqueueNoop(JobsApiTest.ALICE, "{}");
    String bobs = enqueueNoop(JobsApiTest.BOB, "{}");

    assertThat(as(ADMIN).get("/api/admin/jobs").<List<String>>path("jobs.uid"))
        .containsExactly(bobs, alices);
    assertThat(
            as(ADMIN)
                .queryParam("owner_kind", "user")
                .queryParam("owner_id", "alice")
                .get("/api/admin/jobs")
                .<List<String>>path("jobs.uid"))
        .containsExactly(alices);
    as(ADMIN).queryParam("owner_id", "alice").get("/api/admin/jobs").then().statusCode(400);
    as(ADMIN).queryParam("status", "lost").get("/api/admin/jobs").then().statusCode(400);
  }

  @Test
  void shouldRetryAFailedJobOnly() throws Exception {
    String uid = enqueueNoop(JobsApiTest.ALICE, "{\"fail\": \"once\"}");
    as(ADMIN).post("/api/admin/jobs/" + uid + "/retry").then().statusCode(409);
    noop.runOnce();
    assertThat(noop.awaitTasks(Duration.ofSeconds(10))).isTrue();
    noop.runOnce();
    as(ADMIN)
        .get("/api/jobs/" + uid)
        .then()
        .body("status", equalTo("failed"))
        .body("error", equalTo("IllegalStateException: once"));

    as(JobsApiTest.ALICE).post("/api/admin/jobs/" + uid + "/retry").then().statusCode(403);
    as(ADMIN)
        .post("/api/admin/jobs/" + uid + "/retry")
        .then()
        .statusCode(200)
        .body("status", equalTo("pending"))
        .body("error", nullValue())
        .body("completed_at", nullValue());

    // It runs again (and fails again, as its payload says).
    assertThat(noop.runOnce().claimed()).isEqualTo(1);
    assertThat(noop.awaitTasks(Duration.ofSeconds(10))).isTrue();
    noop.runOnce();
    as(ADMIN)
        .get("/api/jobs/" + uid)
        .then()
        .body("status", equalTo("failed"))
        .body("error", equalTo("IllegalStateException: once"));

    as(ADMIN)
        .post("/api/admin/jobs/0190a5c8-7c1e-7b3a-9f00-1a2b3c4d5e6f/retry")
        .then()
        .statusCode(404);
    as(ADMIN).post("/api/admin/jobs/zzz/retry").then().statusCode(400);
  }
}
