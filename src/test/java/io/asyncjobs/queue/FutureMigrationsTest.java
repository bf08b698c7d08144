package io.asyncjobs.queue;

import static io.asyncjobs.testing.Jobs.as;
import static io.asyncjobs.testing.Jobs.enqueueNoop;
import static io.asyncjobs.testing.Jobs.runAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.asyncjobs.kinds.noop.NoopService;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.FutureRelease;
import io.asyncjobs.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.util.Map;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * This build on the schema of a newer release, as after {@code kubectl rollout undo}: it must start
 * (its Flyway, configured as in application.properties, ignores the migration it does not know), be
 * ready, and enqueue, run and answer for jobs as before.
 */
@QuarkusTest
class FutureMigrationsTest {

  private static final String ALICE = Tokens.user("alice");

  /** The Flyway the service migrates with at start, built from this build's configuration. */
  @Inject Flyway flyway;

  @Inject Database db;
  @Inject NoopService noop;

  @BeforeEach
  void migrateAsTheNewerRelease() {
    db.clearJobs();
    FutureRelease.migrate(db.dataSource());
  }

  @AfterEach
  void undoTheNewerRelease() {
    db.clearJobs();
    FutureRelease.undo(db);
  }

  @Test
  void shouldStartOnASchemaThatANewerReleaseMigrated() {
    assertThat(db.query("SELECT success FROM flyway_schema_history WHERE version = ?", "999"))
        .as("the newer release's migration, recorded as its Flyway records it")
        .containsExactly(Map.of("success", true));

    // What the service does at start (quarkus.flyway.migrate-at-start, validating on migrate).
    assertThatCode(flyway::migrate).doesNotThrowAnyException();
    assertThatCode(flyway::validate).doesNotThrowAnyException();
    HealthCheckResponse ready = new SchemaHealthCheck(flyway).call();
    assertThat(ready.getStatus()).isEqualTo(HealthCheckResponse.Status.UP);
    assertThat(ready.getData().orElseThrow()).containsEntry("pending", 0L);
  }

  @Test
  void shouldEnqueueRunAndAnswerForJobsOnTheNewerSchema() throws InterruptedException {
    String uid = enqueueNoop(ALICE, "{}");
    runAll(noop);

    assertThat(
            as(ALICE)
                .get("/api/jobs/" + uid)
                .then()
                .statusCode(200)
                .extract()
                .<String>path("status"))
        .isEqualTo("done");
    assertThat(db.query("SELECT future_note FROM jobs WHERE uid = ?::uuid", uid))
        .as("the newer release's column, left to its default")
        .hasSize(1)
        .allSatisfy(row -> assertThat(row.get("future_note")).isNull());
  }
}
