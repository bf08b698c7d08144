package io.asyncjobs;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.notNullValue;

import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

@QuarkusTest
class HealthTest {

  @Test
  void shouldReportUpWithTheDatabaseReady() {
    given()
        .when()
        .get("/q/health")
        .then()
        .statusCode(200)
        .body("status", equalTo("UP"))
        .body("checks.name", hasItem("Database connections health check"));
  }

  @Test
  void shouldNameTheReleaseThisReplicaRunsInTheLivenessDetails() throws Exception {
    // Beside each other during a rollout or a rollback, replicas say which release they run.
    // From pom.xml: HealthIT runs this against the packaged app, where the test has no app config.
    String version = ReleaseFilesTest.version();
    given()
        .when()
        .get("/q/health/live")
        .then()
        .statusCode(200)
        .body("checks.find { it.name == 'release' }.status", equalTo("UP"))
        .body("checks.find { it.name == 'release' }.data.name", equalTo("async-jobs"))
        .body("checks.find { it.name == 'release' }.data.version", equalTo(version));
    org.assertj.core.api.Assertions.assertThat(version).matches("\\d+\\.\\d+\\.\\d+(-SNAPSHOT)?");
  }

  @Test
  void shouldShowThisReplicaAsTheOwnerWithItsEpoch() {
    given()
        .when()
        .get("/q/health/ready")
        .then()
        .statusCode(200)
        .body("checks.find { it.name == 'owner lock' }.status", equalTo("UP"))
        .body("checks.find { it.name == 'owner lock' }.data.owner", equalTo(true))
        .body("checks.find { it.name == 'owner lock' }.data.mode", equalTo("postgres"))
        .body("checks.find { it.name == 'owner lock' }.data.epoch", greaterThan(0))
        .body("checks.find { it.name == 'owner lock' }.data.since", notNullValue());
    given()
        .get("/q/health/ready")
        .then()
        .body("checks.find { it.name == 'database schema' }.status", equalTo("UP"))
        .body(
            "checks.find { it.name == 'database schema' }.data.version",
            equalTo(String.valueOf(newestMigration())))
        .body("checks.find { it.name == 'database schema' }.data.pending", equalTo(0));
  }

  @Test
  void shouldExposeTheOwnerGaugeAndLockCounters() {
    given()
        .header("Accept", "text/plain")
        .when()
        .get("/q/metrics")
        .then()
        .statusCode(200)
        .body(containsString("jobs_owner{shard=\"all\",} 1.0"))
        .body(containsString("jobs_owner_renewals_total"))
        .body(containsString("jobs_owner_changes_total"));
  }

  /** The highest V<n> among the migrations this build carries. */
  static int newestMigration() {
    try (java.util.stream.Stream<java.nio.file.Path> files =
        java.nio.file.Files.list(java.nio.file.Path.of("src/main/resources/db/migration"))) {
      return files
          .map(p -> p.getFileName().toString())
          .filter(n -> n.matches("V\\d+__.*\\.sql"))
          .mapToInt(n -> Integer.parseInt(n.substring(1, n.indexOf("__"))))
          .max()
          .orElseThrow();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
