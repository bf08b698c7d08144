package io.asyncjobs.api;

import static io.asyncjobs.testing.Jobs.as;
import static io.asyncjobs.testing.Jobs.enqueueNoop;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;

import io.asyncjobs.kinds.noop.NoopService;
import io.asyncjobs.problem.Problem;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Pausing and resuming a service through the admin API, as an operator sees it. */
@QuarkusTest
class PauseApiTest {

  static final String ADMIN = Tokens.admin("root");
  private static final String CARD = "find { it.service == 'noop' }.pause.";

  @Inject Database db;
  @Inject NoopService noop;

  @BeforeEach
  void clean() {
    db.clearJobs();
    db.update("DELETE FROM service_pauses");
  }

  @AfterEach
  void resume() {
    db.update("DELETE FROM service_pauses");
    db.update("DELETE FROM service_settings");
  }

  @Test
  void shouldPauseWithAReasonShowItOnTheCardAndKeepTheFirstPause() {
    as(ADMIN)
        .contentType(ContentType.JSON)
        .body("{\"reason\": \"storage maintenance\"}")
        .post("/api/admin/services/noop/pause")
        .then()
        .statusCode(200)
        .body("service", equalTo("noop"))
        .body("paused", equalTo(true))
        .body("paused_by", equalTo("user:root"))
        .body("reason", equalTo("storage maintenance"));
    String since =
        as(ADMIN)
            .get("/api/admin/services")
            .then()
            .statusCode(200)
            .extract()
            .path(CARD + "paused_at");
    assertThat(since).isNotBlank();

    // Idempotent: a second pause (without a body) keeps the first one's time and reason.
    as(ADMIN)
        .post("/api/admin/services/noop/pause")
        .then()
        .statusCode(200)
        .body("paused_at", equalTo(since))
        .body("reason", equalTo("storage maintenance"));

    var cards = as(ADMIN).get("/api/admin/services").then().extract().jsonPath();
    assertThat(cards.getBoolean(CARD + "paused")).isTrue();
    assertThat(cards.getString(CARD + "reason")).isEqualTo("storage maintenance");
    assertThat(cards.getBoolean("find { it.service == 'zip' }.pause.paused")).isFalse();
  }

  @Test
  void shouldPauseWithTheJsonBodyNullAsAGeneratedClientSendsWithoutAReason() {
    // A client generated from the document sends the JSON null when the optional body is left
    // out; that was a NullPointerException and a 500, for an unknown service too.
    as(ADMIN)
        .contentType(ContentType.JSON)
        .body("null")
        .post("/api/admin/services/noop/pause")
        .then()
        .statusCode(200)
        .body("paused", equalTo(true))
        .body("reason", nullValue());
    as(ADMIN)
        .contentType(ContentType.JSON)
        .body("null")
        .post("/api/admin/services/nosuchservice/pause")
        .then()
        .statusCode(404)
        .contentType(Problem.MEDIA_TYPE);
    assertThat(db.query("SELECT service FROM service_pauses")).hasSize(1);
  }

  @Test
  void shouldAcceptEnqueuesClaimNothingAndStayReadyWhilePaused() throws Exception {
    as(ADMIN).post("/api/admin/services/noop/pause").then().statusCode(200);

    String uid = enqueueNoop(JobsApiTest.ALICE, "{}");
    assertThat(noop.runOnce().claimed()).isZero();
    as(JobsApiTest.ALICE)
        .get("/api/jobs/" + uid)
        .then()
        .statusCode(200)
        .body("status", equalTo("pending"));
    given().get("/q/health/ready").then().statusCode(200).body("status", equalTo("UP"));

    as(ADMIN)
        .post("/api/admin/services/noop/resume")
        .then()
        .statusCode(200)
        .body("paused", equalTo(false))
        .body("paused_at", nullValue());
    assertThat(noop.runOnce().claimed()).isEqualTo(1);
    // Idempotent: resuming a running service answers the same.
    as(ADMIN)
        .post("/api/admin/services/noop/resume")
        .then()
        .statusCode(200)
        .body("paused", equalTo(false));
    assertThat(noop.awaitTasks(java.time.Duration.ofSeconds(10))).isTrue();
    noop.runOnce();
  }

  @Test
  void shouldKeepThePauseWhenTheOverridesAreReset() {
    as(ADMIN).post("/api/admin/services/noop/pause").then().statusCode(200);
    as(ADMIN)
        .contentType(ContentType.JSON)
        .body("{\"max_concurrent\": 2}")
        .put("/api/admin/services/noop/settings")
        .then()
        .statusCode(200);
    db.update("DELETE FROM service_settings WHERE service = 'noop'"); // admin settings noop --reset

    assertThat(
            as(ADMIN)
                .get("/api/admin/services")
                .then()
                .extract()
                .jsonPath()
                .getBoolean(CARD + "paused"))
        .isTrue();
  }

  @Test
  void shouldRefuseUnknownServicesBadReasonsAndCallersWithoutTheRole() {
    for (String action : new String[] {"pause", "resume"}) {
      as(ADMIN)
          .post("/api/admin/services/nosuch/" + action)
          .then()
          .statusCode(404)
          .contentType(Problem.MEDIA_TYPE)
          .body("detail", equalTo("no service \"nosuch\""));
      as(JobsApiTest.ALICE)
          .post("/api/admin/services/noop/" + action)
          .then()
          .statusCode(403)
          .contentType(Problem.MEDIA_TYPE);
    }
    as(ADMIN)
        .contentType(ContentType.JSON)
        .body("{\"reason\": \"" + "x".repeat(501) + "\"}")
        .post("/api/admin/services/noop/pause")
        .then()
        .statusCode(400)
        .contentType(Problem.MEDIA_TYPE)
        .body("detail", containsString("reason must be 1 to 500 characters"));
    as(ADMIN)
        .contentType(ContentType.JSON)
        .body("{\"why\": \"typo\"}")
        .post("/api/admin/services/noop/pause")
        .then()
        .statusCode(400)
        .contentType(Problem.MEDIA_TYPE)
        .body("detail", containsString("unknown field \"why\""));
    assertThat(db.query("SELECT * FROM service_pauses")).isEmpty();
  }
}
