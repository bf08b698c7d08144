package io.asyncjobs.example;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;

import io.asyncjobs.engine.JobService;
import io.asyncjobs.files.FileScope;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobQueue;
import io.asyncjobs.queue.JobStatus;
import io.asyncjobs.queue.Owner;
import io.asyncjobs.storage.DataDirectory;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.TestClock;
import io.asyncjobs.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The example kind of docs/writing-a-kind.md works as the page says. */
@QuarkusTest
class LineCountServiceTest {

  @Inject LineCountService service;
  @Inject JobQueue queue;
  @Inject DataDirectory data;
  @Inject TestClock clock;
  @Inject Database db;

  @AfterEach
  void tearDown() {
    clock.reset();
  }

  @Test
  void shouldCountLinesWriteAReportAndCleanItUpWhenExpired() throws Exception {
    db.clearJobs();
    clock.set(Instant.parse("2026-06-01T00:00:00Z"));
    FileScope alices = FileScope.ofOwner(data.root(), new Owner("user", "alice"));
    Path inputs = alices.ensureBase();
    Files.writeString(inputs.resolve("a.txt"), "one\ntwo\nthree\n");
    Files.writeString(inputs.resolve("b.txt"), "only\n");
    UUID uid =
        queue.enqueue(
            "linecount",
            Map.of("paths", List.of("a.txt", "b.txt"), FileScope.PAYLOAD_KEY, alices.relative()),
            "user",
            "alice",
            null);

    assertThat(service.runOnce().claimed()).isEqualTo(1);
    assertThat(service.awaitTasks(Duration.ofSeconds(5))).isTrue();
    assertThat(service.runOnce().done()).isEqualTo(1);

    Job job = queue.getJob(uid).orElseThrow();
    assertThat(job.status).isEqualTo(JobStatus.DONE);
    assertThat(job.itemCount).isEqualTo(2L);
    assertThat(job.bytesIn).isEqualTo(19L);
    Path report = data.root().resolve((String) job.result.get(JobService.RESULT_FILE));
    assertThat(Files.readAllLines(report, StandardCharsets.UTF_8))
        .containsExactly("3 a.txt", "1 b.txt");
    assertThat(job.bytesOut).isEqualTo(Files.size(report));

    clock.advance(Duration.ofDays(8));
    assertThat(service.runOnce().swept()).isEqualTo(1);
    assertThat(report.getParent()).doesNotExist();
    assertThat(queue.getJob(uid)).isEmpty();
  }

  @Test
  void shouldShowTheSameCodeAsTheDocs() throws Exception {
    String source =
        Files.readString(Path.of("src/test/java/io/asyncjobs/example/LineCountService.java"));
    String doc = Files.readString(Path.of("docs/writing-a-kind.md"));
    String block = doc.substring(doc.indexOf("```java\n") + 8);
    block = block.substring(0, block.indexOf("```"));
    assertThat(block).isEqualTo(source);
  }

  @Test
  void shouldEnqueueThroughItsRouteAndRefuseWhatItsCheckRefuses() throws Exception {
    db.clearJobs();
    FileScope alices = FileScope.ofOwner(data.root(), new Owner("user", "alice"));
    Files.writeString(alices.ensureBase().resolve("c.txt"), "x\ny\n");
    String token = Tokens.user("alice");

    given()
        .auth()
        .oauth2(token)
        .contentType("application/json")
        .body("{\"paths\": [\"missing.txt\"]}")
        .post("/api/linecount")
        .then()
        .statusCode(400)
        .body("detail", containsString("no file \"missing.txt\""));
    given()
        .auth()
        .oauth2(token)
        .contentType("application/json")
        .body("{\"paths\": [\"c.txt\"], \"extra\": 1}")
        .post("/api/linecount")
        .then()
        .statusCode(400);
    assertThat(db.query("SELECT uid FROM jobs")).as("nothing enqueued").isEmpty();

    String uid =
        given()
            .auth()
            .oauth2(token)
            .contentType("application/json")
            .body("{\"paths\": [\"c.txt\"]}")
            .post("/api/linecount")
            .then()
            .statusCode(202)
            .extract()
            .path("uid");
    Job job = queue.getJob(UUID.fromString(uid)).orElseThrow();
    assertThat(job.kind).isEqualTo("linecount");
    assertThat(job.owner()).isEqualTo(new Owner("user", "alice"));
    assertThat(job.preferredName).isEqualTo("line-counts.txt");
    assertThat(job.payload).containsEntry(FileScope.PAYLOAD_KEY, alices.relative());

    assertThat(service.runOnce().claimed()).isEqualTo(1);
    assertThat(service.awaitTasks(Duration.ofSeconds(5))).isTrue();
    assertThat(service.runOnce().done()).isEqualTo(1);
    assertThat(queue.getJob(job.uid).orElseThrow().itemCount).isEqualTo(1L);
  }
}
