package io.asyncjobs.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The OpenAPI 3.1 schema features the contract check must understand, on a small document of its
 * own (no app): type arrays with {@code "null"}, {@code $ref} with siblings, {@code const}, closed
 * and open objects, and the strict reading of answers (a field the schema does not list). These are
 * the cases swagger-request-validator 2.46.0 passed unnoticed on a 3.1 document.
 */
class ContractCheckTest {

  static final String DOCUMENT =
      """
      {"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
       "paths": {"/api/jobs/{uid}": {"get": {
         "parameters": [{"name": "uid", "in": "path", "required": true,
                         "schema": {"type": "string", "format": "uuid"}},
                        {"name": "limit", "in": "query",
                         "schema": {"type": "integer", "minimum": 1, "maximum": 5}}],
         "responses": {"200": {"description": "ok",
           "headers": {"ETag": {"schema": {"type": "string"}}},
           "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Job"}}}}}}}},
       "components": {"schemas": {
         "Kind": {"type": "string", "enum": ["noop", "zip"]},
         "Open": {"type": "object", "properties": {"a": {"type": "string"}},
                  "additionalProperties": true},
         "Job": {"type": "object", "required": ["error", "kind", "v"], "properties": {
           "error": {"type": ["string", "null"]},
           "kind": {"$ref": "#/components/schemas/Kind", "description": "a sibling"},
           "v": {"const": 1},
           "open": {"$ref": "#/components/schemas/Open"}}}}}}
      """;

  static final String UID = "/api/jobs/0190a4a8-2b6e-7a5e-9f1e-3c2d1b0a9f8e";

  final ContractCheck check = new ContractCheck(ContractDocument.parse(DOCUMENT));

  List<ContractViolation> answer(String body) {
    return exchange(UID, Map.of(), 200, Map.of(), body);
  }

  List<ContractViolation> exchange(
      String path,
      Map<String, List<String>> query,
      int status,
      Map<String, List<String>> headers,
      String body) {
    Map<String, List<String>> answerHeaders = new java.util.HashMap<>(headers);
    answerHeaders.put("content-type", List.of("application/json"));
    return check.check(
        new ContractCheck.Exchange(
            "GET",
            path,
            query,
            Map.of(),
            null,
            false,
            status,
            answerHeaders,
            () -> body.getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void shouldAcceptAnAnswerTheDocumentDescribes() {
    assertThat(answer("{\"error\": null, \"kind\": \"noop\", \"v\": 1}")).isEmpty();
    assertThat(answer("{\"error\": \"x\", \"kind\": \"zip\", \"v\": 1, \"open\": {\"b\": 2}}"))
        .isEmpty();
  }

  @Test
  void shouldReadTypeArraysRefSiblingsAndConst() {
    assertThat(answer("{\"error\": 5, \"kind\": \"noop\", \"v\": 1}"))
        .extracting(ContractViolation::pointer, ContractViolation::kind)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("/error", "wrong-type"));
    assertThat(answer("{\"error\": null, \"kind\": \"bad\", \"v\": 1}"))
        .extracting(ContractViolation::pointer)
        .containsExactly("/kind");
    assertThat(answer("{\"error\": null, \"kind\": \"noop\", \"v\": 2}"))
        .extracting(ContractViolation::pointer, ContractViolation::kind)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("/v", "const"));
  }

  @Test
  void shouldReportAFieldTheSchemaDoesNotListAndAMissingRequiredOne() {
    assertThat(answer("{\"error\": null, \"kind\": \"noop\", \"v\": 1, \"extra\": true}"))
        .extracting(ContractViolation::pointer, ContractViolation::kind)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("/extra", "undeclared-field"));
    assertThat(answer("{\"kind\": \"noop\", \"v\": 1}"))
        .extracting(ContractViolation::pointer, ContractViolation::kind)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("/error", "missing-field"));
  }

  @Test
  void shouldReportUndeclaredStatusHeaderAndRoute() {
    String job = "{\"error\": null, \"kind\": \"noop\", \"v\": 1}";
    assertThat(exchange(UID, Map.of(), 200, Map.of("etag", List.of("\"1\"")), job)).isEmpty();
    assertThat(exchange(UID, Map.of(), 200, Map.of("retry-after", List.of("5")), job))
        .extracting(ContractViolation::describe)
        .containsExactly(
            "GET /api/jobs/{uid} -> 200 at header:retry-after [undeclared-header]: header"
                + " retry-after is sent but not declared on this response");
    assertThat(exchange(UID, Map.of(), 429, Map.of(), "{}"))
        .extracting(ContractViolation::kind)
        .containsExactly("undeclared-status");
    assertThat(exchange("/api/other", Map.of(), 200, Map.of(), "{}"))
        .extracting(ContractViolation::kind)
        .containsExactly("undocumented-route");
    assertThat(exchange("/api/other", Map.of(), 404, Map.of(), "{}")).isEmpty();
  }

  @Test
  void shouldReportARequestTheDocumentRefusesOnlyWhenItIsAccepted() {
    String job = "{\"error\": null, \"kind\": \"noop\", \"v\": 1}";
    assertThat(exchange(UID, Map.of("limit", List.of("9")), 200, Map.of(), job))
        .extracting(ContractViolation::pointer, ContractViolation::kind)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("query:limit", "accepted-invalid-request"));
    assertThat(exchange("/api/jobs/not-a-uuid", Map.of(), 200, Map.of(), job))
        .extracting(ContractViolation::pointer)
        .containsExactly("path:uid");
    assertThat(exchange(UID, Map.of("limit", List.of("9")), 400, Map.of(), "{}"))
        .noneMatch(v -> v.kind().equals("accepted-invalid-request"));
    assertThat(
            exchange(
                UID, Map.of("limit", List.of("3"), "unknown", List.of("x")), 200, Map.of(), job))
        .isEmpty();
  }

  @Test
  void shouldHoldAHeadToTheGetWithoutItsBody() {
    assertThat(
            check.check(
                new ContractCheck.Exchange(
                    "HEAD",
                    UID,
                    Map.of("limit", List.of("2")),
                    Map.of(),
                    null,
                    false,
                    200,
                    Map.of("content-type", List.of("application/json")),
                    () -> new byte[0])))
        .isEmpty();
  }
}
