package io.asyncjobs.kinds.fork;

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

/** What {@code POST /api/fork} refuses, and that a refusal enqueues nothing. */
@QuarkusTest
class ForkResourceTest {

  @Inject DataDirectory data;
  @Inject Database db;

  String owner;
  String token;
  Path base;
  Path outside;

  @BeforeEach
  void freshOwner() throws Exception {
    owner = "fr-" + UUID.randomUUID().toString().substring(0, 8);
    token = Tokens.user(owner);
    base = Files.createDirectories(data.root().resolve("files/user").resolve(owner));
    outside = Files.createDirectories(data.root().resolve("outside-" + owner));
    Files.createDirectories(base.resolve("site/pages"));
    Files.writeString(base.resolve("site/index.html"), "home");
    Files.writeString(base.resolve("file.txt"), "a file");
    Files.createDirectories(base.resolve("taken"));
    Files.createSymbolicLink(base.resolve("out"), outside);
    Files.createSymbolicLink(base.resolve("intosite"), base.resolve("site"));
  }

  @AfterEach
  void removeOutside() throws Exception {
    Trees.delete(outside);
    db.update("DELETE FROM jobs WHERE owner_id LIKE ?", "%" + owner);
  }

  Response post(String body) {
    return given().auth().oauth2(token).contentType(ContentType.JSON).body(body).post("/api/fork");
  }

  long jobsOfOwner() {
    return (Long)
        db.query("SELECT count(*) AS n FROM jobs WHERE owner_id = ?", owner).get(0).get("n");
  }

  static String fork(String source, String target) {
    return "{\"source\": \"" + source + "\", \"target\": \"" + target + "\"}";
  }

  @Test
  void shouldRefuseEveryBadPayloadWith400AndEnqueueNothing() {
    Map<String, String> cases = new LinkedHashMap<>();
    cases.put("{}", "source is required");
    cases.put("{\"target\": \"copy\"}", "source is required");
    cases.put("{\"source\": \"site\"}", "target is required");
    cases.put("{\"source\": 1, \"target\": \"copy\"}", "source must be a non-empty string");
    cases.put("{\"source\": \"site\", \"target\": true}", "target must be a non-empty string");
    cases.put("{\"source\": \"site\", \"target\": \"\"}", "target must be a non-empty string");
    cases.put("{\"source\": \"site\", \"target\": \"copy\", \"mode\": 1}", "unknown field mode");
    cases.put(
        "{\"source\": \"site\", \"target\": \"copy\", \"scope\": \"files\"}",
        "unknown field scope");
    cases.put(fork("/etc", "copy"), "is absolute");
    cases.put(fork("site", "/tmp/copy"), "is absolute");
    cases.put(fork("../", "copy"), "leads outside your folder");
    cases.put(fork("site", "../stolen"), "leads outside your folder");
    cases.put(fork("site", "a/../../../stolen"), "leads outside your folder");
    cases.put(fork("out", "copy"), "leads outside your folder (a link)");
    cases.put(fork("site", "out/copy"), "leads outside your folder (a link)");
    cases.put(fork("missing", "copy"), "\"missing\" does not exist");
    cases.put(fork("file.txt", "copy"), "\"file.txt\" is not a folder");
    cases.put(fork("site", "site/copy"), "is the source or inside it");
    cases.put(fork("site", "site/pages/deeper/copy"), "is the source or inside it");
    cases.put(fork("site", "site"), "is the source or inside it");
    cases.put(fork("site", "intosite/copy"), "is the source or inside it");
    cases.put(fork("intosite", "site/copy"), "is the source or inside it");
    cases.put(fork("site", "file.txt/copy"), "\"file.txt\" is a file");

    for (Map.Entry<String, String> bad : cases.entrySet()) {
      Response response = post(bad.getKey());
      assertThat(response.statusCode()).as(bad.getKey()).isEqualTo(400);
      assertThat(response.contentType()).as(bad.getKey()).startsWith(Problem.MEDIA_TYPE);
      assertThat(response.<String>path("type"))
          .as(bad.getKey())
          .isEqualTo("urn:async-jobs:problem:bad-request");
      assertThat(response.<String>path("detail")).as(bad.getKey()).contains(bad.getValue());
    }
    for (String malformed : new String[] {"[]", "7", "{\"source\": "}) {
      assertThat(post(malformed).statusCode()).as(malformed).isEqualTo(400);
    }
    assertThat(jobsOfOwner()).isZero();
    assertThat(base.resolve("copy")).doesNotExist();
  }

  @Test
  void shouldAnswer409WhenTheTargetExists() {
    for (String existing : new String[] {"taken", "file.txt", "./taken/", "."}) {
      Response response = post(fork("site", existing));
      assertThat(response.statusCode()).as(existing).isEqualTo(409);
      assertThat(response.contentType()).startsWith(Problem.MEDIA_TYPE);
      assertThat(response.<String>path("type")).isEqualTo("urn:async-jobs:problem:target-exists");
      assertThat(response.<String>path("detail")).contains("already exists");
    }
    assertThat(jobsOfOwner()).isZero();
  }

  @Test
  void shouldEnqueueAValidForkWithTheCallersScopeRecorded() {
    Response response = post(fork("site", "drafts/new/site-2"));
    response.then().statusCode(202);
    assertThat(response.<String>path("kind")).isEqualTo("fork");
    UUID uid = UUID.fromString(response.path("uid"));
    assertThat(
            db.query(
                "SELECT payload->>'scope' AS scope, payload->>'target' AS target"
                    + " FROM jobs WHERE uid = ?",
                uid))
        .containsExactly(Map.of("scope", "files/user/" + owner, "target", "drafts/new/site-2"));
    // Nothing is created at enqueue: the parents come with the job.
    assertThat(base.resolve("drafts")).doesNotExist();
    given()
        .contentType(ContentType.JSON)
        .body(fork("site", "copy"))
        .post("/api/fork")
        .then()
        .statusCode(401);
    assertThat(jobsOfOwner()).isEqualTo(1);
  }
}
