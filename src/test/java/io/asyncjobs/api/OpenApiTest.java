package io.asyncjobs.api;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

@QuarkusTest
@SuppressWarnings("unchecked")
class OpenApiTest {

  @Test
  void shouldDescribeEveryRouteWithTheBearerSchemeAndExamples() {
    JsonPath doc = openApi();
    Map<String, Map<String, Object>> paths = doc.getMap("paths");

    assertThat(paths)
        .containsKeys(
            "/api/jobs",
            "/api/jobs/{uid}",
            "/api/jobs/{uid}/download",
            "/api/jobs/{uid}/events",
            "/api/noop",
            "/api/zip",
            "/api/fork",
            "/api/seo",
            "/api/seo_meta",
            "/api/deepsearch",
            "/api/admin/services",
            "/api/admin/services/{name}/settings",
            "/api/admin/jobs",
            "/api/admin/jobs/{uid}/retry");
    assertThat(paths.get("/api/jobs/{uid}")).containsKeys("get", "delete");
    assertThat(paths.get("/api/admin/services/{name}/settings")).containsKeys("get", "put");
    assertThat(doc.getString("components.securitySchemes.bearer.scheme")).isEqualTo("bearer");
    assertThat(doc.getString("paths.'/api/jobs/{uid}'.get.summary")).isEqualTo("Status of a job");
    assertThat(
            doc.getMap(
                "paths.'/api/jobs/{uid}'.get.responses.'200'.content.'application/json'.examples"))
        .containsKey("done");
    assertThat(doc.getMap("paths.'/api/noop'.post.requestBody.content.'application/json'.examples"))
        .isNotEmpty();
    assertThat(doc.getMap("components.responses")).containsKeys("notFound", "unauthenticated");
  }

  /**
   * Every route that takes a body lists what RequestLimits answers for any body: 413 for one too
   * large, 408 for one that declared its length and did not arrive in time.
   */
  @Test
  void shouldListTheBodyLimitsAnswersOnEveryRouteThatTakesABody() {
    JsonPath doc = openApi();
    Map<String, Map<String, Map<String, Object>>> paths = doc.getMap("paths");
    List<String> withBodies = new ArrayList<>();
    paths.forEach(
        (path, operations) ->
            operations.forEach(
                (method, operation) -> {
                  if (operation.containsKey("requestBody")) {
                    withBodies.add(method + " " + path);
                    List<String> codes =
                        ((Map<?, ?>) operation.get("responses"))
                            .keySet().stream().map(String::valueOf).toList();
                    assertThat(codes).as(method + " " + path).contains("408", "413");
                  }
                }));
    assertThat(withBodies).contains("post /api/noop", "put /api/admin/services/{name}/settings");
  }

  @Test
  void shouldGiveEveryKindsEnqueueRouteTheSharedAnswers() {
    JsonPath doc = openApi();
    for (String kind : List.of("noop", "zip", "fork", "seo", "seo_meta", "deepsearch")) {
      Map<String, Map<String, Object>> responses =
          doc.getMap("paths.'/api/" + kind + "'.post.responses");
      assertThat(responses).as(kind).containsKeys("202", "400", "401", "404", "413", "415", "422");
      assertThat(responses.get("202"))
          .as(kind)
          .containsEntry("$ref", "#/components/responses/enqueued");
    }
    assertThat(doc.getMap("paths.'/api/fork'.post.responses")).containsKey("409");
    for (String kind : List.of("noop", "zip", "fork", "seo", "seo_meta", "deepsearch")) {
      String batch = "paths.'/api/" + kind + "/batch'.post";
      assertThat(doc.getMap(batch + ".responses"))
          .as(kind)
          .containsKeys("202", "400", "401", "404", "413", "415", "422");
      assertThat(doc.getString(batch + ".responses.'202'.description"))
          .contains("one result per job");
      assertThat(
              doc.getList(
                  batch + ".requestBody.content.'application/json'.examples.'two jobs'.value.jobs"))
          .hasSize(2);
    }
    assertThat(
            doc.getString("components.responses.enqueued.content.'application/json'.schema.$ref"))
        .isEqualTo("#/components/schemas/Enqueued");
    for (String problem :
        List.of(
            "malformed",
            "unauthenticated",
            "forbidden",
            "notFound",
            "conflict",
            "tooLarge",
            "unsupportedMediaType",
            "idempotencyKeyReused")) {
      assertThat(
              doc.getString(
                  "components.responses."
                      + problem
                      + ".content.'application/problem+json'.schema.$ref"))
          .as(problem)
          .isEqualTo("#/components/schemas/Problem");
    }
    assertThat(doc.getMap("components.schemas.Problem.properties")).containsKeys("type", "status");
  }

  @Test
  void shouldDescribeEveryFieldTheSharedServiceAddedWithExamples() {
    JsonPath doc = openApi();
    for (String kind : List.of("noop", "zip")) {
      List<Map<String, Object>> parameters =
          doc.getList("paths.'/api/" + kind + "'.post.parameters");
      for (String name : List.of("priority", "run_after", "delay_seconds", "callback_url")) {
        assertThat(parameters)
            .as("%s: query parameter %s with a description and an example", kind, name)
            .anySatisfy(
                p -> {
                  assertThat(p).containsEntry("name", name).containsEntry("in", "query");
                  assertThat(p.get("example")).isNotNull();
                  assertThat((String) p.get("description")).isNotBlank();
                });
      }
    }
    assertThat(
            doc.getMap(
                "paths.'/api/noop/batch'.post.requestBody.content.'application/json'"
                    + ".examples.'two jobs'.value.jobs[1]"))
        .containsKeys("priority", "delay_seconds", "callback_url");
    Map<String, Object> job = doc.getMap("components.schemas.Job.properties");
    assertThat(job)
        .containsKeys(
            "priority", "run_after", "attempt", "attempts", "retry_at", "callback_url", "callback");
    assertThat(doc.getMap("components.schemas.Callback.properties"))
        .containsKeys("state", "attempts", "last_status", "next_attempt_at", "delivered_at");
    assertThat(doc.getMap("components.schemas.Attempt.properties"))
        .containsKeys("attempt", "error", "started_at", "ended_at", "retry_at");
    assertThat(doc.getString("components.schemas.Attempt.properties.error.examples[0]"))
        .isNotBlank();
    assertThat(doc.getMap("paths"))
        .containsKeys(
            "/api/admin/services/{name}/pause",
            "/api/admin/services/{name}/resume",
            "/api/admin/jobs/cancel",
            "/api/admin/jobs/retry");
  }

  @Test
  void shouldDocumentThe503OfAnUnreachableDatabaseOnEveryApiRoute() {
    JsonPath doc = openApi();
    Map<String, Map<String, Object>> paths = doc.getMap("paths");
    paths.forEach(
        (path, operations) -> {
          if (!path.startsWith("/api/")) {
            return;
          }
          operations.forEach(
              (method, operation) -> {
                Object responses =
                    operation instanceof Map<?, ?> described ? described.get("responses") : null;
                if (responses != null) {
                  assertThat(((Map<?, ?>) responses).get("503"))
                      .as("%s %s", method, path)
                      .isEqualTo(Map.of("$ref", "#/components/responses/databaseUnavailable"));
                }
              });
        });
    assertThat(
            doc.getString(
                "components.responses.databaseUnavailable.content.'application/problem+json'"
                    + ".schema.$ref"))
        .isEqualTo("#/components/schemas/Problem");
    assertThat(doc.getMap("components.responses.databaseUnavailable.headers"))
        .containsKey("Retry-After");
  }

  @Test
  void shouldNameEveryOperationAndGiveEveryAnswerThatCarriesDataASchema() {
    // What a client generated from the document needs: stable method names (operationId, unique)
    // and a schema on every answer with a body, else the generated method returns nothing.
    JsonPath doc = openApi();
    Map<String, Map<String, Map<String, Object>>> paths = doc.getMap("paths");
    Set<String> ids = new HashSet<>();
    List<String> missing = new ArrayList<>();
    paths.forEach(
        (path, operations) ->
            operations.forEach(
                (method, operation) -> {
                  String id = (String) operation.get("operationId");
                  if (id == null || !ids.add(id)) {
                    missing.add(method + " " + path + ": operationId " + id);
                  }
                  Map<String, Map<String, Object>> responses =
                      (Map<String, Map<String, Object>>) operation.get("responses");
                  responses.forEach(
                      (code, answer) -> {
                        if (code.startsWith("2") && answer.get("$ref") == null) {
                          Map<String, Map<String, Object>> content =
                              (Map<String, Map<String, Object>>) answer.get("content");
                          if (content == null
                              || content.values().stream().anyMatch(m -> m.get("schema") == null)) {
                            missing.add(method + " " + path + " " + code + ": no schema");
                          }
                        }
                      });
                }));
    assertThat(missing).isEmpty();
    assertThat(doc.getString("paths.'/api/zip/batch'.post.operationId"))
        .isEqualTo("enqueueZipBatch");
    assertThat(doc.getString("paths.'/api/seo_meta'.post.operationId")).isEqualTo("enqueueSeoMeta");
    assertThat(doc.getMap("components.securitySchemes")).containsOnlyKeys("bearer");
    assertThat(
            doc.getString(
                "paths.'/api/jobs/{uid}'.get.parameters.find { it.name == 'uid' }.schema.format"))
        .isEqualTo("uuid");
    assertThat(doc.getList("components.schemas.Job.properties.error.type"))
        .containsExactlyInAnyOrder("string", "null");
    assertThat(doc.getList("components.schemas.Job.required")).contains("uid", "error");
  }

  @Test
  void shouldNameTheMethodsARouteTakesOnA405() {
    // No operation can declare a 405 (it answers a method the path lacks); RFC 9110 has it name
    // the methods in Allow. Read from the resources' annotations, in the native executable too.
    given()
        .auth()
        .oauth2(Tokens.user("alice"))
        .put("/api/jobs/" + UUID.randomUUID())
        .then()
        .statusCode(405)
        .header("Allow", "DELETE, GET, HEAD");
  }

  private static JsonPath openApi() {
    return given()
        .queryParam("format", "json")
        .get("/q/openapi")
        .then()
        .statusCode(200)
        .extract()
        .jsonPath();
  }
}
