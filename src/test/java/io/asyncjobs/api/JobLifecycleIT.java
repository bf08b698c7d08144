package io.asyncjobs.api;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.startsWith;

import io.asyncjobs.problem.Problem;
import io.asyncjobs.testing.Jobs;
import io.asyncjobs.testing.PackagedAppResource;
import io.asyncjobs.testing.Tokens;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.restassured.specification.RequestSpecification;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The packaged application, or the native executable under {@code -Dnative}, driven only over HTTP
 * as a client would: jobs run by its own scheduler from enqueue to download, error bodies, and the
 * job meters. It cannot reach into the engine, so it waits for a job the way a browser does, on the
 * job's event stream, which ends after the final status.
 */
@QuarkusIntegrationTest
@WithTestResource(PackagedAppResource.class)
class JobLifecycleIT {

  private static final String ALICE = Tokens.user("alice");
  private static final Duration JOB_TIMEOUT = Duration.ofSeconds(30);

  @Test
  void shouldRunEnqueuedJobsToTheEndAndServeTheirFile() throws Exception {
    String withFile = enqueue("{\"artifact_bytes\": 1000, \"progress_steps\": 2}");
    String failing = enqueue("{\"fail\": \"asked to fail\"}");

    JsonPath done = Jobs.awaitFinalEvent(ALICE, withFile, JOB_TIMEOUT);
    assertThat(done.getString("status")).isEqualTo("done");
    assertThat(done.getInt("result.bytes_out")).isEqualTo(1000);
    JsonPath failed = Jobs.awaitFinalEvent(ALICE, failing, JOB_TIMEOUT);
    assertThat(failed.getString("status")).isEqualTo("failed");
    assertThat(failed.getString("error")).endsWith("asked to fail");

    String downloadUrl =
        as(ALICE)
            .get("/api/jobs/" + withFile)
            .then()
            .statusCode(200)
            .body("status", equalTo("done"))
            .extract()
            .path("download_url");
    String body =
        as(ALICE)
            .get(downloadUrl)
            .then()
            .statusCode(200)
            .header("Content-Length", "1000")
            .extract()
            .asString();
    assertThat(body).isEqualTo(DownloadTest.contentOf(withFile, 1000));
    as(ALICE)
        .get("/api/jobs/" + failing + "/download")
        .then()
        .statusCode(409)
        .contentType(Problem.MEDIA_TYPE)
        .body("type", equalTo("urn:async-jobs:problem:job-not-done"));
  }

  @Test
  void shouldAnswerMistakesWithProblemBodies() {
    given()
        .get("/api/jobs/" + UUID.randomUUID())
        .then()
        .statusCode(401)
        .contentType(Problem.MEDIA_TYPE)
        .body("type", equalTo("urn:async-jobs:problem:unauthenticated"));
    as(ALICE)
        .get("/api/jobs/" + UUID.randomUUID())
        .then()
        .statusCode(404)
        .contentType(Problem.MEDIA_TYPE)
        .body("type", equalTo("urn:async-jobs:problem:not-found"))
        .body("status", equalTo(404));
    as(ALICE)
        .contentType(ContentType.JSON)
        .body("{\"sleep_ms\": \"soon\"}")
        .post("/api/noop")
        .then()
        .statusCode(400)
        .contentType(Problem.MEDIA_TYPE)
        .body("type", equalTo("urn:async-jobs:problem:bad-request"))
        .body("detail", startsWith("sleep_ms"));
  }

  @Test
  void shouldExportJobMetersPerKind() throws Exception {
    Jobs.awaitFinalEvent(ALICE, enqueue("{\"artifact_bytes\": 10}"), JOB_TIMEOUT);

    String scrape =
        given()
            .header("Accept", "text/plain; version=0.0.4")
            .get("/q/metrics")
            .then()
            .statusCode(200)
            .extract()
            .asString();

    assertThat(sample(scrape, "jobs_enqueued_total", "kind", "noop")).isGreaterThanOrEqualTo(1);
    assertThat(sample(scrape, "jobs_completed_total", "kind", "noop", "status", "done"))
        .isGreaterThanOrEqualTo(1);
    assertThat(sample(scrape, "jobs_bytes_out_total", "kind", "noop")).isGreaterThanOrEqualTo(10);
    assertThat(sample(scrape, "jobs_duration_seconds_count", "kind", "noop"))
        .isGreaterThanOrEqualTo(1);
    // From the grouped queue query, refreshed on a schedule: exported, whatever it reads now.
    assertThat(sample(scrape, "jobs_queue_depth", "kind", "noop", "status", "done"))
        .isNotNegative();
    assertThat(sample(scrape, "jobs_owner")).isEqualTo(1);
  }

  private static RequestSpecification as(String token) {
    return given().auth().oauth2(token);
  }

  private static String enqueue(String body) {
    return as(ALICE)
        .contentType(ContentType.JSON)
        .body(body)
        .post("/api/noop")
        .then()
        .statusCode(202)
        .extract()
        .path("uid");
  }

  /**
   * The value of the one series named {@code name} whose labels include {@code labelPairs} in a
   * Prometheus text scrape; fails when none or several are exported.
   */
  private static double sample(String scrape, String name, String... labelPairs) {
    List<String> wanted = new ArrayList<>();
    for (int i = 0; i < labelPairs.length; i += 2) {
      wanted.add(labelPairs[i] + "=\"" + labelPairs[i + 1] + "\"");
    }
    List<String> lines =
        scrape
            .lines()
            .filter(l -> l.startsWith(name + "{") || l.startsWith(name + " "))
            .filter(l -> wanted.stream().allMatch(l::contains))
            .toList();
    assertThat(lines).as(name + " " + wanted + " is exported once").hasSize(1);
    String line = lines.get(0);
    return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
  }
}
