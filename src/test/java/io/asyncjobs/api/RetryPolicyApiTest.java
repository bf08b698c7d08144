package io.asyncjobs.api;

import static io.asyncjobs.testing.Jobs.as;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.nullValue;

import io.asyncjobs.kinds.noop.NoopService;
import io.asyncjobs.settings.SettingsOverride;
import io.asyncjobs.settings.SettingsStore;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.TestClock;
import io.asyncjobs.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code max-attempts} through the admin API, and what a caller sees of a job's failed attempts in
 * its status view: the attempt count, each attempt's error and times, and when it is tried again.
 */
@QuarkusTest
class RetryPolicyApiTest {

  private static final String ALICE = Tokens.user("alice");
  private static final String ADMIN = Tokens.admin("root");
  private static final Instant T0 = Instant.parse("2026-06-01T10:00:00Z");

  @Inject Database db;
  @Inject NoopService noop;
  @Inject SettingsStore settings;
  @Inject TestClock clock;

  @BeforeEach
  void clean() {
    db.clearJobs();
    clock.set(T0);
  }

  @AfterEach
  void reset() throws InterruptedException {
    settings.update(NoopService.KIND, SettingsOverride.NONE);
    noop.runOnce();
    noop.awaitTasks(Duration.ofSeconds(10));
    clock.reset();
  }

  @Test
  void shouldShowEachFailedAttemptAndTheNextTryInTheStatusView() throws Exception {
    as(ADMIN)
        .contentType(ContentType.JSON)
        .body("{\"max_attempts\": 3}")
        .put("/api/admin/services/noop/settings")
        .then()
        .statusCode(200)
        .body("effective.max_attempts", equalTo(3))
        .body("configured.max_attempts", equalTo(1));

    String uid =
        as(ALICE)
            .contentType(ContentType.JSON)
            .body("{\"fail_attempts\": 1}")
            .post("/api/noop")
            .then()
            .statusCode(202)
            .extract()
            .path("uid");
    runAndSettle();

    String retryAt =
        as(ALICE)
            .get("/api/jobs/" + uid)
            .then()
            .statusCode(200)
            .body("status", equalTo("pending"))
            .body("attempt", equalTo(1))
            .body("error", nullValue())
            .body("attempts", hasSize(1))
            .body("attempts[0].attempt", equalTo(1))
            .body("attempts[0].error", containsString("TransientFailure: attempt 1 failed"))
            .body("attempts[0].started_at", equalTo(T0.toString()))
            .extract()
            .path("retry_at");
    assertThat(Instant.parse(retryAt)).isBetween(T0.plusSeconds(5), T0.plusSeconds(10));

    clock.set(Instant.parse(retryAt));
    runAndSettle();
    as(ALICE)
        .get("/api/jobs/" + uid)
        .then()
        .body("status", equalTo("done"))
        .body("attempt", equalTo(1))
        .body("attempts", hasSize(1))
        .body("retry_at", nullValue());
  }

  @Test
  void shouldRefuseAMaxAttemptsOutOfRange() {
    for (String value : new String[] {"0", "101"}) {
      as(ADMIN)
          .contentType(ContentType.JSON)
          .body("{\"max_attempts\": " + value + "}")
          .put("/api/admin/services/noop/settings")
          .then()
          .statusCode(400)
          .body("detail", containsString("max_attempts must be between 1 (no retry) and 100"));
    }
    assertThat(settings.overrides(NoopService.KIND)).isEqualTo(SettingsOverride.NONE);
  }

  @Test
  void shouldRefuseAFailAttemptsTheNoopKindCannotTake() {
    as(ALICE)
        .contentType(ContentType.JSON)
        .body("{\"fail_attempts\": -1}")
        .post("/api/noop")
        .then()
        .statusCode(400)
        .body("detail", containsString("fail_attempts must be a whole number from 0 to 100"));
  }

  private void runAndSettle() throws InterruptedException {
    assertThat(noop.runOnce().claimed()).isEqualTo(1);
    assertThat(noop.awaitTasks(Duration.ofSeconds(10))).isTrue();
    noop.runOnce();
  }
}
