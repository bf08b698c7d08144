package io.asyncjobs.testing;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.node.ObjectNode;

/**
 * The contract filter itself: real answers of the running app, held to altered copies of the
 * document it serves, are reported where the copy no longer describes them (a field, a null, a
 * status, a header, a body the schema refuses), and not where it does.
 */
@QuarkusTest
@ContractExempt("checks the filter itself, with filters of its own against altered documents")
class ContractFilterTest {

  static final String ALICE = Tokens.user("alice");

  ObjectNode served;

  @BeforeEach
  void readServedDocument() {
    served =
        (ObjectNode)
            ContractDocument.JSON.readTree(
                ContractDocument.fetch(RestAssured.baseURI + ":" + RestAssured.port));
  }

  /** A request through a filter holding it to {@code document}, collecting into {@code found}. */
  RequestSpecification checkedBy(ObjectNode document, List<ContractViolation> found) {
    return given()
        .auth()
        .oauth2(ALICE)
        .filter(new ContractFilter(ContractDocument.of(document), RestAssured.port, found::addAll));
  }

  String enqueue(ObjectNode document, List<ContractViolation> found) {
    return checkedBy(document, found)
        .contentType(ContentType.JSON)
        .body("{}")
        .post("/api/noop")
        .then()
        .statusCode(202)
        .extract()
        .path("uid");
  }

  ObjectNode schema(ObjectNode document, String name) {
    return (ObjectNode) document.path("components").path("schemas").path(name);
  }

  @Test
  void shouldReportAJobFieldTheSchemaNoLongerLists() {
    String uid = enqueue(served, new ArrayList<>());
    List<ContractViolation> asServed = new ArrayList<>();
    checkedBy(served, asServed).get("/api/jobs/" + uid).then().statusCode(200);

    ObjectNode withoutStatus = served.deepCopy();
    ((ObjectNode) schema(withoutStatus, "Job").get("properties")).remove("status");
    List<ContractViolation> found = new ArrayList<>();
    checkedBy(withoutStatus, found).get("/api/jobs/" + uid).then().statusCode(200);

    assertThat(asServed).noneMatch(v -> v.pointer().equals("/status"));
    assertThat(found)
        .anySatisfy(
            v -> {
              assertThat(v.pointer()).isEqualTo("/status");
              assertThat(v.kind()).isEqualTo("undeclared-field");
              assertThat(v.describe()).startsWith("GET /api/jobs/{uid} -> 200 at /status");
            });
  }

  @Test
  void shouldReportANullTheSchemaDoesNotAllow() {
    String uid = enqueue(served, new ArrayList<>());
    ObjectNode errorNotNullable = served.deepCopy();
    ((ObjectNode) schema(errorNotNullable, "Job").get("properties"))
        .putObject("error")
        .put("type", "string");
    List<ContractViolation> found = new ArrayList<>();

    checkedBy(errorNotNullable, found).get("/api/jobs/" + uid).then().statusCode(200);

    assertThat(found)
        .anyMatch(v -> v.pointer().equals("/error") && v.kind().equals("null-not-allowed"));
  }

  @Test
  void shouldReportAnUndeclaredStatus() {
    ObjectNode without202 = served.deepCopy();
    ((ObjectNode) without202.at("/paths/~1api~1noop/post/responses")).remove("202");
    List<ContractViolation> found = new ArrayList<>();

    enqueue(without202, found);

    assertThat(found)
        .anyMatch(
            v ->
                v.kind().equals("undeclared-status")
                    && v.status() == 202
                    && v.route().equals("/api/noop"));
  }

  @Test
  void shouldReportAnUndeclaredHeader() {
    ObjectNode withoutHeaders = served.deepCopy();
    ((ObjectNode) withoutHeaders.at("/components/responses/enqueued")).remove("headers");
    ObjectNode inline = (ObjectNode) withoutHeaders.at("/paths/~1api~1noop/post/responses/202");
    inline.remove("headers");
    List<ContractViolation> found = new ArrayList<>();

    enqueue(withoutHeaders, found);

    assertThat(found)
        .anyMatch(
            v -> v.pointer().equals("header:location") && v.kind().equals("undeclared-header"));
  }

  @Test
  void shouldReportABodyTheDocumentRefusesYetTheServerAccepted() {
    ObjectNode strictBody = served.deepCopy();
    ObjectNode body =
        (ObjectNode) strictBody.at("/paths/~1api~1noop/post/requestBody/content/application~1json");
    ObjectNode schema = body.putObject("schema");
    schema.put("type", "object");
    schema.putArray("required").add("must_have");
    List<ContractViolation> found = new ArrayList<>();

    enqueue(strictBody, found);

    assertThat(found)
        .anySatisfy(
            v -> {
              assertThat(v.kind()).isEqualTo("accepted-invalid-request");
              assertThat(v.pointer()).isEqualTo("/must_have");
              assertThat(v.describe()).contains("POST /api/noop -> 202");
            });
  }

  @Test
  void shouldLetADeliberatelyBrokenRequestThatIsRefusedPass() {
    List<ContractViolation> found = new ArrayList<>();

    checkedBy(served, found)
        .contentType(ContentType.JSON)
        .body("{}")
        .post("/api/noop?priority=high")
        .then()
        .statusCode(400);

    assertThat(found).noneMatch(v -> v.kind().equals("accepted-invalid-request"));
  }

  @Test
  void shouldFailTheTestWithMethodPathStatusAndPointer() {
    assumeFalse(ContractViolations.collecting(), "collect mode logs instead of failing");
    ObjectNode without202 = served.deepCopy();
    ((ObjectNode) without202.at("/paths/~1api~1noop/post/responses")).remove("202");
    ContractFilter failing =
        new ContractFilter(
            ContractDocument.of(without202),
            RestAssured.port,
            violations -> ContractViolations.report("ContractFilterTest", violations));

    assertThatThrownBy(
            () ->
                given()
                    .auth()
                    .oauth2(ALICE)
                    .filter(failing)
                    .contentType(ContentType.JSON)
                    .body("{}")
                    .post("/api/noop"))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("POST /api/noop -> 202")
        .hasMessageContaining("[undeclared-status]");
  }
}
