package io.asyncjobs.api;

import static io.asyncjobs.testing.Jobs.as;
import static io.asyncjobs.testing.Jobs.enqueueNoop;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import io.asyncjobs.kinds.noop.NoopService;
import io.asyncjobs.problem.Problem;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobQueue;
import io.asyncjobs.storage.DataDirectory;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.TestClock;
import io.asyncjobs.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@QuarkusTest
class DownloadTest {

  static final String ALICE = JobsApiTest.ALICE;
  static final String BOB = JobsApiTest.BOB;

  @Inject Database db;
  @Inject NoopService noop;
  @Inject JobQueue queue;
  @Inject TestClock clock;
  @Inject DataDirectory data;

  @BeforeEach
  void clean() {
    db.clearJobs();
  }

  @AfterEach
  void resetClock() {
    clock.reset();
  }

  /** A done noop job with a file of {@code size} bytes; returns its uid. */
  String doneJob(int size, String name) throws InterruptedException {
    String body =
        name == null
            ? "{\"artifact_bytes\": " + size + "}"
            : "{\"artifact_bytes\": " + size + ", \"name\": \"" + name + "\"}";
    String uid = enqueueNoop(ALICE, body);
    noop.runOnce();
    assertThat(noop.awaitTasks(Duration.ofSeconds(10))).isTrue();
    noop.runOnce();
    return uid;
  }

  static String contentOf(String uid, int size) {
    String line = "noop job " + uid + "\n";
    return line.repeat(size / line.length() + 1).substring(0, size);
  }

  @Test
  void shouldServeTheWholeFileWithValidatorsAndTheDownloadName() throws Exception {
    String uid = doneJob(1000, "résumé 2026.txt");

    Response response = as(ALICE).get("/api/jobs/" + uid + "/download");

    response
        .then()
        .statusCode(200)
        .header("Accept-Ranges", "bytes")
        .header("Content-Length", "1000")
        .header("Content-Type", "text/plain; charset=utf-8");
    assertThat(response.asString()).isEqualTo(contentOf(uid, 1000));
    assertThat(response.header("ETag")).startsWith("\"" + uid);
    assertThat(response.header("Content-Disposition"))
        .isEqualTo(
            "attachment; filename=\"r_sum_ 2026.txt\"; filename*=UTF-8''r%C3%A9sum%C3%A9%202026.txt");
  }

  @Test
  void shouldServeOneRangeAnd416OutsideTheFile() throws Exception {
    String uid = doneJob(1000, null);
    String path = "/api/jobs/" + uid + "/download";
    String content = contentOf(uid, 1000);

    Response part = as(ALICE).header("Range", "bytes=10-19").get(path);
    part.then().statusCode(206).header("Content-Range", "bytes 10-19/1000");
    assertThat(part.asString()).isEqualTo(content.substring(10, 20));

    Response tail = as(ALICE).header("Range", "bytes=-5").get(path);
    tail.then().statusCode(206).header("Content-Range", "bytes 995-999/1000");
    assertThat(tail.asString()).isEqualTo(content.substring(995));

    Response open = as(ALICE).header("Range", "bytes=990-").get(path);
    open.then().statusCode(206).header("Content-Range", "bytes 990-999/1000");
    assertThat(open.asString()).isEqualTo(content.substring(990));

    as(ALICE)
        .header("Range", "bytes=1000-1005")
        .get(path)
        .then()
        .statusCode(416)
        .header("Content-Range", "bytes */1000")
        .contentType(Problem.MEDIA_TYPE);

    // A refused range writes nothing: the job was not used.
    String fresh = doneJob(10, null);
    as(ALICE)
        .header("Range", "bytes=50-60")
        .get("/api/jobs/" + fresh + "/download")
        .then()
        .statusCode(416);
    assertThat(queue.getJob(UUID.fromString(fresh)).orElseThrow().lastAccessedAt).isNull();

    // A suffix of an empty file is the whole, empty file (RFC 9110), not a 416.
    String empty = doneJob(0, null);
    Response none = as(ALICE).header("Range", "bytes=-100").get("/api/jobs/" + empty + "/download");
    none.then().statusCode(200).header("Content-Length", "0");

    // Several ranges are not supported: the whole file, as HTTP allows.
    Response several = as(ALICE).header("Range", "bytes=0-1,5-6").get(path);
    several.then().statusCode(200).header("Content-Length", "1000");
    assertThat(several.header("Content-Range")).isNull();
    assertThat(several.asString()).isEqualTo(content);
    // A stale If-Range sends the whole file too.
    Response stale = as(ALICE).header("Range", "bytes=0-1").header("If-Range", "\"old\"").get(path);
    stale.then().statusCode(200).header("Content-Length", "1000");
    assertThat(stale.asString()).isEqualTo(content);
  }

  @Test
  void shouldAnswer304ForACurrentETag() throws Exception {
    String uid = doneJob(100, null);
    String path = "/api/jobs/" + uid + "/download";
    String etag = as(ALICE).get(path).header("ETag");

    Response cached = as(ALICE).header("If-None-Match", etag).get(path);
    cached.then().statusCode(304).header("ETag", etag);
    assertThat(cached.asByteArray()).isEmpty();
    as(ALICE).header("If-None-Match", "\"other\"").get(path).then().statusCode(200);
  }

  @Test
  void shouldServeASignedLinkWithoutATokenAndRefuseTamperedOrExpiredOnes() throws Exception {
    String uid = doneJob(100, null);
    String link = as(ALICE).get("/api/jobs/" + uid).path("download_url");

    Response signed = given().get(link);
    signed.then().statusCode(200);
    assertThat(signed.asString()).isEqualTo(contentOf(uid, 100));

    String otherUid = doneJob(10, null);
    String[] tampered = {
      link.replace("sig=", "sig=x"),
      link.replaceAll("expires=\\d+", "expires=4102444800"),
      link.replace(uid, otherUid),
      "/api/jobs/" + uid + "/download?expires=abc&sig=x",
      "/api/jobs/" + uid + "/download?sig=" + link.substring(link.indexOf("sig=") + 4)
    };
    for (String bad : tampered) {
      given()
          .get(bad)
          .then()
          .statusCode(403)
          .contentType(Problem.MEDIA_TYPE)
          .body("type", equalTo("urn:async-jobs:problem:forbidden"));
    }

    // Past its expiry the same link is refused.
    clock.set(Instant.now().plus(Duration.ofHours(1)));
    given().get(link).then().statusCode(403);
  }

  @Test
  void shouldExtendTheJobsExpiryOnEachDownload() throws Exception {
    String uid = doneJob(10, null);
    UUID id = UUID.fromString(uid);
    // Pretend the job is about to expire.
    db.update("UPDATE jobs SET expires_at = now() + interval '1 minute' WHERE uid = ?", id);
    Instant before = queue.getJob(id).orElseThrow().expiresAt;

    as(ALICE).get("/api/jobs/" + uid + "/download").then().statusCode(200);

    Job after = queue.getJob(id).orElseThrow();
    assertThat(after.lastAccessedAt).isNotNull();
    // The test profile keeps noop jobs seven days (the default retention).
    assertThat(after.expiresAt).isAfter(before.plus(Duration.ofDays(6)));
  }

  @Test
  void shouldRefuseDownloadsOfOtherOwnersMissingOrUnfinishedJobs() throws Exception {
    String uid = doneJob(10, null);
    as(BOB).get("/api/jobs/" + uid + "/download").then().statusCode(404);
    assertThat(as(Tokens.admin("root")).get("/api/jobs/" + uid + "/download").asString())
        .isEqualTo(contentOf(uid, 10));
    as(ALICE).get("/api/jobs/" + UUID.randomUUID() + "/download").then().statusCode(404);
    as(ALICE).get("/api/jobs/nope/download").then().statusCode(400);
    given().get("/api/jobs/" + uid + "/download").then().statusCode(401);

    String pending = enqueueNoop(ALICE, "{\"artifact_bytes\": 10}");
    as(ALICE)
        .get("/api/jobs/" + pending + "/download")
        .then()
        .statusCode(409)
        .contentType(Problem.MEDIA_TYPE)
        .body("type", equalTo("urn:async-jobs:problem:job-not-done"));

    String noFile = enqueueNoop(ALICE, "{}");
    noop.runOnce();
    noop.awaitTasks(Duration.ofSeconds(10));
    noop.runOnce();
    as(ALICE).get("/api/jobs/" + noFile + "/download").then().statusCode(404);
  }

  @Test
  void shouldNeverServeAFileOutsideTheDataDirectory() throws Exception {
    String uid = doneJob(10, null);
    UUID id = UUID.fromString(uid);
    for (String escape : new String[] {"../../pom.xml", "/etc/passwd", "artifacts/../../pom.xml"}) {
      db.update(
          "UPDATE jobs SET result = jsonb_set(result, '{file}', to_jsonb(?::text)) WHERE uid = ?",
          escape,
          id);
      Response response = as(ALICE).get("/api/jobs/" + uid + "/download");
      response.then().statusCode(404).contentType(Problem.MEDIA_TYPE);
      assertThat(response.asString().getBytes(StandardCharsets.UTF_8).length).isLessThan(1000);
    }

    // A link inside the data directory that points out of it is refused too.
    Path folder = Files.createDirectories(data.root().resolve("artifacts/noop").resolve(uid));
    Path link = folder.resolve("escape.txt");
    Files.deleteIfExists(link);
    Files.createSymbolicLink(link, Path.of("pom.xml").toAbsolutePath());
    db.update(
        "UPDATE jobs SET result = jsonb_set(result, '{file}', to_jsonb(?::text)) WHERE uid = ?",
        data.root().relativize(link).toString(),
        id);
    as(ALICE).get("/api/jobs/" + uid + "/download").then().statusCode(404);
  }
}
