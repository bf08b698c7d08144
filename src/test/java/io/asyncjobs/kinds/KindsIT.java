package io.asyncjobs.kinds;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;

import io.asyncjobs.testing.DebianPackages;
import io.asyncjobs.testing.Jobs;
import io.asyncjobs.testing.PackagedAppResource;
import io.asyncjobs.testing.Tokens;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.restassured.specification.RequestSpecification;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every kind, run by the packaged application (or, in a {@code -Dnative} build, the native
 * executable) over a caller's folder, as a user would: enqueue, follow the job's events to its end,
 * fetch the result through the signed link. What only the packaged build can get wrong shows here:
 * a parser, codec or resource the executable lacks fails the job or the download.
 */
@QuarkusIntegrationTest
@WithTestResource(PackagedAppResource.class)
class KindsIT {

  private static final String ALICE = Tokens.user("alice");
  private static final Duration JOB_TIMEOUT = Duration.ofSeconds(60);
  private static final Path UNZIP = Path.of("/usr/bin/unzip");

  @BeforeAll
  static void fillAlicesFolder() throws IOException {
    Path site = Files.createDirectories(aliceFolder().resolve("site"));
    page(
        site.resolve("index.html"),
        "Lease handover",
        "<p>The owner of the lease hands over to the next replica at once.</p>"
            + "<a href=\"guide.html\">guide</a> <a href=\"gone.html\">gone</a>"
            + "<img src=\"logo.png\">");
    page(
        site.resolve("guide.html"),
        "Guide",
        "<h1>Guide</h1><p>A replica that loses its lease stops claiming jobs.</p>");
    Files.writeString(
        site.resolve("notes.md"), "# Notes\n\nWhy a lease, not a cluster protocol.\n");
    Files.write(site.resolve("logo.png"), new byte[] {(byte) 0x89, 'P', 'N', 'G', 0, 1, 2, 3});
  }

  @Test
  void shouldZipAFolderIntoAnArchiveUnzipAccepts() throws Exception {
    JsonPath done = runToTheEnd("zip", "{\"paths\": [\"site\"], \"name\": \"site\"}");

    Path archive = Files.createTempFile("kinds-it", ".zip");
    Files.write(archive, download(done));
    DebianPackages.require("The zip check", Map.of(UNZIP, "unzip"));
    Process test = new ProcessBuilder(UNZIP.toString(), "-t", archive.toString()).start();
    String out = new String(test.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(test.waitFor()).as(out).isZero();
    assertThat(out).contains("site/index.html", "site/logo.png", "No errors detected");
  }

  @Test
  void shouldForkAFolder() throws Exception {
    runToTheEnd("fork", "{\"source\": \"site\", \"target\": \"site-fork\"}");

    Path fork = aliceFolder().resolve("site-fork");
    assertThat(Files.readString(fork.resolve("guide.html")))
        .isEqualTo(Files.readString(aliceFolder().resolve("site/guide.html")));
    assertThat(Files.readAllBytes(fork.resolve("logo.png"))).hasSize(8);
  }

  @Test
  void shouldRankFilesThatMatchASearch() throws Exception {
    JsonPath done = runToTheEnd("deepsearch", "{\"root\": \"site\", \"query\": \"lease\"}");

    String hits = new String(download(done), StandardCharsets.UTF_8);
    assertThat(hits).contains("index.html", "guide.html", "notes.md");
  }

  @Test
  void shouldAuditASiteAndFindItsBrokenLink() throws Exception {
    JsonPath done =
        runToTheEnd("seo", "{\"site\": \"site\", \"base_url\": \"https://example.com/\"}");

    assertThat(done.getInt("item_count")).isEqualTo(2);
    assertThat(done.getInt("result.issues.broken_link")).isEqualTo(1);
    assertThat(download(done)).startsWith('P', 'K');
  }

  @Test
  void shouldDeriveMetaTagsAndWritePatchedCopies() throws Exception {
    JsonPath done = runToTheEnd("seo_meta", "{\"site\": \"site\", \"write_copies\": true}");

    assertThat(done.getInt("item_count")).isEqualTo(2);
    assertThat(download(done)).startsWith('P', 'K');
    assertThat(Files.readString(aliceFolder().resolve("site/guide.html")))
        .as("the user's page is never modified")
        .doesNotContain("og:title");
  }

  @Test
  void shouldServeTheAdminPageAndItsServiceCards() {
    given()
        .get("/admin/")
        .then()
        .statusCode(200)
        .contentType(containsString("text/html"))
        .body(containsString("admin.js"));
    given().get("/admin/admin.js").then().statusCode(200);
    given().get("/js/JobPoller.js").then().statusCode(200).body(containsString("JobPoller"));
    List<String> kinds =
        as(Tokens.admin("root"))
            .get("/api/admin/services")
            .then()
            .statusCode(200)
            .extract()
            .jsonPath()
            .getList("service");
    assertThat(kinds).contains("zip", "fork", "seo", "seo_meta", "deepsearch");
  }

  private static Path aliceFolder() {
    return PackagedAppResource.dataDir().resolve("files/user/alice");
  }

  private static void page(Path file, String title, String body) throws IOException {
    Files.writeString(
        file,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>"
            + title
            + "</title></head><body>"
            + body
            + "</body></html>");
  }

  private static RequestSpecification as(String token) {
    return given().auth().oauth2(token);
  }

  /** Enqueues a job of {@code kind}, follows it to its final status, and requires it done. */
  private JsonPath runToTheEnd(String kind, String payload) throws Exception {
    String uid =
        as(ALICE)
            .contentType(ContentType.JSON)
            .body(payload)
            .post("/api/" + kind)
            .then()
            .statusCode(202)
            .extract()
            .path("uid");
    Jobs.awaitFinalEvent(ALICE, uid, JOB_TIMEOUT);
    JsonPath job = as(ALICE).get("/api/jobs/" + uid).then().statusCode(200).extract().jsonPath();
    assertThat(job.getString("status")).as(kind + " job: " + job.prettify()).isEqualTo("done");
    return job;
  }

  /** The finished job's file, through its signed link, without the token. */
  private byte[] download(JsonPath job) {
    String url = job.getString("download_url");
    assertThat(url).as("download_url").isNotNull();
    return given().get(url).then().statusCode(200).extract().asByteArray();
  }
}
