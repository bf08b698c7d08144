package io.asyncjobs.api;

import static io.asyncjobs.testing.Jobs.as;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.asyncjobs.problem.Problem;
import io.asyncjobs.queue.JobIds;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.RawHttp;
import io.asyncjobs.testing.Tokens;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A body is read as JSON only when the request says it is JSON: a body without {@code Content-Type}
 * gets a 415 problem on every route that takes one, and nothing is written.
 */
@QuarkusTest
class UntypedBodiesTest {

  private static final String ALICE = Tokens.user("alice");
  private static final String ADMIN = Tokens.admin("root");

  @Inject Database db;
  @Inject ObjectMapper json;

  @TestHTTPResource("/")
  URI base;

  @BeforeEach
  void clean() {
    db.clearJobs();
  }

  @Test
  void shouldRefuseABodyWithoutAContentTypeOnEveryEnqueueRoute() throws Exception {
    for (String kind : List.of("noop", "zip", "fork", "deepsearch", "seo", "seo_meta")) {
      RawHttp.Answer answer = send("POST", "/api/" + kind, ALICE, null, "{}");

      assertThat(answer.status()).as("POST /api/%s: %s", kind, answer.body()).isEqualTo(415);
      JsonNode problem = problem(answer);
      assertThat(problem.path("type").asText())
          .isEqualTo(Problem.TYPE_PREFIX + "unsupported-media-type");
      assertThat(problem.path("detail").asText()).contains("Content-Type", "application/json");
    }
    assertThat(db.query("SELECT uid FROM jobs")).isEmpty();
  }

  @Test
  void shouldRefuseSettingsWithoutAContentTypeAndKeepTheOldOnes() throws Exception {
    String route = "/api/admin/services/noop/settings";
    try {
      RawHttp.Answer answer = send("PUT", route, ADMIN, null, "{\"max_concurrent\": 3}");

      assertThat(answer.status()).as(answer.body()).isEqualTo(415);
      problem(answer);
      as(ADMIN)
          .get(route)
          .then()
          .statusCode(200)
          .body("overrides.max_concurrent", org.hamcrest.Matchers.nullValue());
    } finally {
      as(ADMIN).contentType(ContentType.JSON).body("{}").put(route).then().statusCode(200);
    }
  }

  @Test
  void shouldTakeJsonWithACharsetAndABodilessPostWithoutAType() throws Exception {
    for (String type :
        List.of("application/json; charset=UTF-8", "application/json;charset=utf-8")) {
      RawHttp.Answer answer = send("POST", "/api/noop", ALICE, type, "{\"sleep_ms\": 1}");
      assertThat(answer.status()).as("%s: %s", type, answer.body()).isEqualTo(202);
    }
    assertThat(db.query("SELECT uid FROM jobs")).hasSize(2);

    // A route that reads no body needs no type.
    RawHttp.Answer retry =
        send("POST", "/api/admin/jobs/" + JobIds.next() + "/retry", ADMIN, null, "");
    assertThat(retry.status()).as(retry.body()).isEqualTo(404);
  }

  private RawHttp.Answer send(String method, String path, String token, String type, String body)
      throws Exception {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    StringBuilder head =
        new StringBuilder(method + " " + path + " HTTP/1.1\r\n")
            .append("Host: ")
            .append(base.getHost())
            .append(':')
            .append(base.getPort())
            .append("\r\nAuthorization: Bearer ")
            .append(token)
            .append("\r\nContent-Length: ")
            .append(bytes.length);
    if (type != null) {
      head.append("\r\nContent-Type: ").append(type);
    }
    return RawHttp.send(base, head.toString(), bytes, false);
  }

  private JsonNode problem(RawHttp.Answer answer) throws Exception {
    assertThat(answer.headers().get("content-type")).startsWith(Problem.MEDIA_TYPE);
    JsonNode problem = json.readTree(answer.body());
    assertThat(problem.path("status").asInt()).isEqualTo(answer.status());
    assertThat(problem.path("title").asText()).isNotEmpty();
    return problem;
  }
}
