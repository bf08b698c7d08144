package io.asyncjobs.testing;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.engine.JobService;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Enqueuing through the API and running the engine, as the tests do it again and again. */
public final class Jobs {

  private Jobs() {}

  /** A request carrying {@code token} as its bearer token. */
  public static RequestSpecification as(String token) {
    return given().auth().oauth2(token);
  }

  /** {@code POST /api/<kind>} with a JSON body (a string or anything rest-assured serializes). */
  public static Response post(String token, String kind, Object body) {
    return as(token).contentType(ContentType.JSON).body(body).post("/api/" + kind);
  }

  /** Enqueues a job of {@code kind} and returns its uid, failing unless the answer is 202. */
  public static String enqueue(String token, String kind, Object body) {
    return post(token, kind, body).then().statusCode(202).extract().path("uid");
  }

  /** Enqueues a noop job and returns its uid. */
  public static String enqueueNoop(String token, String body) {
    return enqueue(token, "noop", body);
  }

  /**
   * Follows a job's event stream, as a browser waits for a job, until the stream ends after the
   * final status, and returns the last event: the job's final view. For the packaged application,
   * whose engine a test cannot drive.
   */
  public static JsonPath awaitFinalEvent(String token, String uid, Duration timeout)
      throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(
                URI.create(
                    RestAssured.baseURI + ":" + RestAssured.port + "/api/jobs/" + uid + "/events"))
            .header("Authorization", "Bearer " + token)
            .header("Accept", "text/event-stream")
            .build();
    HttpResponse<String> response =
        HttpClient.newHttpClient()
            .sendAsync(request, HttpResponse.BodyHandlers.ofString())
            .get(timeout.toSeconds(), TimeUnit.SECONDS);
    assertThat(response.statusCode()).isEqualTo(200);
    List<String> data =
        response
            .body()
            .lines()
            .filter(l -> l.startsWith("data:"))
            .map(l -> l.substring(5))
            .toList();
    assertThat(data).as("job events of " + uid).isNotEmpty();
    return new JsonPath(data.get(data.size() - 1).trim());
  }

  /** Claims every pending job of the service, lets the tasks return, and records the outcomes. */
  public static void runAll(JobService service) throws InterruptedException {
    service.runOnce();
    assertThat(service.awaitTasks(Duration.ofSeconds(30))).isTrue();
    service.runOnce();
  }

  /** Runs the service until none of its jobs is pending or running, in at most 20 rounds. */
  public static void runUntilIdle(JobService service, Database db) throws InterruptedException {
    for (int round = 0; round < 20; round++) {
      service.runOnce();
      if (unfinished(service, db) == 0) {
        return;
      }
      assertThat(service.awaitTasks(Duration.ofSeconds(60))).isTrue();
    }
    assertThat(unfinished(service, db)).as("%s jobs still unfinished", service.kind()).isZero();
  }

  private static long unfinished(JobService service, Database db) {
    return (Long)
        db.query(
                "SELECT count(*) AS n FROM jobs WHERE kind = ? AND status IN ('pending', 'running')",
                service.kind())
            .get(0)
            .get("n");
  }
}
