package io.asyncjobs.kinds.deepsearch;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.files.Trees;
import io.asyncjobs.problem.Problem;
import io.asyncjobs.storage.DataDirectory;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What {@code POST /api/deepsearch} refuses, and that a refusal enqueues nothing. */
@QuarkusTest
class DeepsearchResourceTest {

  @Inject DataDirectory data;
  @Inject Database db;

  String owner;
  String token;
  Path base;
  Path outside;

  @BeforeEach
  void freshOwner() throws Exception {
    owner = "dr-" + UUID.randomUUID().toString().substring(0, 8);
    token = Tokens.user(owner);
    base = Files.createDirectories(data.root().resolve("files/user").resolve(owner));
    outside = Files.createDirectories(data.root().resolve("outside-" + owner));
    Files.createDirectories(base.resolve("docs"));
    Files.writeString(base.resolve("docs/a.txt"), "an owl");
    Files.writeString(outside.resolve("secret.txt"), "secret owl");
    Files.createSymbolicLink(base.resolve("out"), outside);
    Files.createSymbolicLink(base.resolve("docs/escape"), outside);
  }

  @AfterEach
  void removeOutside() throws Exception {
    Trees.delete(outside);
    db.update("DELETE FROM jobs WHERE owner_id LIKE ?", "%" + owner);
  }

  Response post(String body) {
    return given()
        .auth()
        .oauth2(token)
        .contentType(ContentType.JSON)
        .body(body)
        .post("/api/deepsearch");
  }

  long jobsOfOwner() {
    return (Long)
        db.query("SELECT count(*) AS n FROM jobs WHERE owner_id = ?", owner).get(0).get("n");
  }

  @Test
  void shouldRefuseEveryBadPayloadWith400AndEnqueueNothing() {
    Map<String, String> cases = new LinkedHashMap<>();
    cases.put("{}", "root is required");
    cases.put("{\"query\": \"owl\"}", "root is required");
    // Well-formed, but Lucene refuses to build it: the caller's query all the same, a 400.
    cases.put("{\"root\": \"docs\", \"query\": \"/[ab]*a[ab]{20}/\"}", "query cannot be run");
    cases.put("{\"root\": \"docs\"}", "query is required");
    cases.put("{\"root\": 7, \"query\": \"owl\"}", "root must be a non-empty string");
    cases.put("{\"root\": \"docs\", \"query\": [\"owl\"]}", "query must be a non-empty string");
    cases.put("{\"root\": \"docs\", \"query\": \"  \"}", "query must be a non-empty string");
    cases.put("{\"root\": \"docs\", \"query\": \"owl\", \"limit\": 0}", "limit must be a whole");
    cases.put("{\"root\": \"docs\", \"query\": \"owl\", \"limit\": 1001}", "limit must be a whole");
    cases.put("{\"root\": \"docs\", \"query\": \"owl\", \"limit\": 2.5}", "limit must be a whole");
    cases.put(
        "{\"root\": \"docs\", \"query\": \"owl\", \"limit\": \"9\"}", "limit must be a whole");
    cases.put("{\"root\": \"docs\", \"query\": \"owl\", \"colour\": 1}", "unknown field colour");
    // The scope is the service's to record; a caller cannot widen its own.
    cases.put(
        "{\"root\": \"docs\", \"query\": \"owl\", \"scope\": \"files\"}", "unknown field scope");
    cases.put("{\"root\": \"/etc\", \"query\": \"owl\"}", "is absolute");
    cases.put("{\"root\": \"../\", \"query\": \"owl\"}", "leads outside your folder");
    cases.put("{\"root\": \"docs/../../other\", \"query\": \"owl\"}", "leads outside your folder");
    cases.put("{\"root\": \"out\", \"query\": \"owl\"}", "leads outside your folder (a link)");
    cases.put("{\"root\": \"docs/escape\", \"query\": \"owl\"}", "leads outside your folder");
    cases.put("{\"root\": \"missing\", \"query\": \"owl\"}", "\"missing\" does not exist");
    cases.put("{\"root\": \"docs/a.txt\", \"query\": \"owl\"}", "\"docs/a.txt\" is not a folder");
    cases.put("{\"root\": \"docs\", \"query\": \"title:(owl\"}", "query: Cannot parse");
    cases.put("{\"root\": \"docs\", \"query\": \"owl AND\"}", "query: Cannot parse");
    cases.put("{\"root\": \"docs\", \"query\": \"*wl\"}", "query: Cannot parse");
    cases.put("{\"root\": \"docs\", \"query\": \"owl\\u0000\"}", "U+0000");

    for (Map.Entry<String, String> bad : cases.entrySet()) {
      Response response = post(bad.getKey());
      assertThat(response.statusCode()).as(bad.getKey()).isEqualTo(400);
      assertThat(response.contentType()).as(bad.getKey()).startsWith(Problem.MEDIA_TYPE);
      assertThat(response.<String>path("type"))
          .as(bad.getKey())
          .isEqualTo("urn:async-jobs:problem:bad-request");
      assertThat(response.<String>path("detail")).as(bad.getKey()).contains(bad.getValue());
    }
    for (String malformed : new String[] {"[]", "\"docs\"", "{\"root\": "}) {
      Response response = post(malformed);
      assertThat(response.statusCode()).as(malformed).isEqualTo(400);
      assertThat(response.contentType()).as(malformed).startsWith(Problem.MEDIA_TYPE);
    }
    assertThat(jobsOfOwner()).isZero();
  }

  @Test
  void shouldRefuseCallersWithoutATokenAndBodiesThatAreNotJson() {
    given()
        .contentType(ContentType.JSON)
        .body("{\"root\": \"docs\", \"query\": \"owl\"}")
        .post("/api/deepsearch")
        .then()
        .statusCode(401);
    given()
        .auth()
        .oauth2(token)
        .contentType(ContentType.TEXT)
        .body("root=docs")
        .post("/api/deepsearch")
        .then()
        .statusCode(415);
    assertThat(jobsOfOwner()).isZero();
  }

  @Test
  void shouldEnqueueAValidSearchWithTheCallersScopeRecorded() {
    Response response = post("{\"root\": \"docs\", \"query\": \"owl AND title:a*\", \"limit\": 5}");
    response.then().statusCode(202);
    UUID uid = UUID.fromString(response.path("uid"));
    assertThat(response.<String>path("kind")).isEqualTo("deepsearch");
    assertThat(
            db.query(
                "SELECT payload->>'scope' AS scope, payload->>'root' AS root FROM jobs WHERE uid = ?",
                uid))
        .containsExactly(Map.of("scope", "files/user/" + owner, "root", "docs"));
    // The whole of the caller's folder is a valid root too.
    post("{\"root\": \".\", \"query\": \"owl\"}").then().statusCode(202);
    assertThat(jobsOfOwner()).isEqualTo(2);
  }

  @Test
  void shouldLetAnAdminSearchAnyOwnersFolderButNothingOutsideFiles() {
    String admin = Tokens.admin("root-" + owner);
    given()
        .auth()
        .oauth2(admin)
        .contentType(ContentType.JSON)
        .body("{\"root\": \"user/" + owner + "/docs\", \"query\": \"owl\"}")
        .post("/api/deepsearch")
        .then()
        .statusCode(202);
    given()
        .auth()
        .oauth2(admin)
        .contentType(ContentType.JSON)
        .body("{\"root\": \"../outside-" + owner + "\", \"query\": \"owl\"}")
        .post("/api/deepsearch")
        .then()
        .statusCode(400);
  }
}
