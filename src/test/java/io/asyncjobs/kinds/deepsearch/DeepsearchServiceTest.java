package io.asyncjobs.kinds.deepsearch;

import static io.asyncjobs.testing.Jobs.runUntilIdle;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.asyncjobs.engine.JobService;
import io.asyncjobs.files.Trees;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobQueue;
import io.asyncjobs.queue.JobStatus;
import io.asyncjobs.storage.DataDirectory;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.TestClock;
import io.asyncjobs.testing.Tokens;
import io.quarkus.arc.ClientProxy;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Deepsearch end to end: enqueue over HTTP, run the engine, read what a caller gets. */
@QuarkusTest
class DeepsearchServiceTest {

  @Inject DeepsearchService service;
  @Inject JobQueue queue;
  @Inject DataDirectory data;
  @Inject TestClock clock;
  @Inject ObjectMapper json;
  @Inject Database db;

  String owner;
  String token;
  Path base;
  Path outside;

  @BeforeEach
  void freshOwner() throws Exception {
    owner = "ds-" + UUID.randomUUID().toString().substring(0, 8);
    token = Tokens.user(owner);
    base = Files.createDirectories(data.root().resolve("files/user").resolve(owner));
    outside = Files.createDirectories(data.root().resolve("outside-" + owner));
  }

  @AfterEach
  void settle() throws Exception {
    ClientProxy.unwrap(service).whenDecided(null);
    clock.reset();
    runUntilIdle(service, db);
    Trees.delete(outside);
  }

  Path write(String name, String content) throws Exception {
    Path file = base.resolve(name);
    Files.createDirectories(file.getParent());
    return Files.writeString(file, content);
  }

  UUID enqueue(Map<String, Object> payload) {
    String uid =
        given()
            .auth()
            .oauth2(token)
            .contentType(ContentType.JSON)
            .body(payload)
            .post("/api/deepsearch")
            .then()
            .statusCode(202)
            .extract()
            .path("uid");
    return UUID.fromString(uid);
  }

  Job job(UUID uid) {
    return queue.getJob(uid).orElseThrow();
  }

  JsonNode results(UUID uid) throws Exception {
    Job done = job(uid);
    assertThat(done.status).as("job %s: %s", uid, done.error).isEqualTo(JobStatus.DONE);
    return json.readTree(
        data.root().resolve((String) done.result.get(JobService.RESULT_FILE)).toFile());
  }

  static List<String> paths(JsonNode results) {
    List<String> out = new ArrayList<>();
    results.get("hits").forEach(hit -> out.add(hit.get("path").asText()));
    return out;
  }

  @Test
  void shouldRankTheBetterMatchFirstAndMarkItsHits() throws Exception {
    write(
        "docs/falcons.md",
        "# Falcons of the world\n\nThe peregrine falcon is the fastest falcon; a falcon dives.\n");
    write(
        "docs/birds.txt",
        "Garden birds: robins, sparrows, blackbirds, tits, finches, wrens and starlings feed"
            + " here all year. Once, a falcon passed over the garden. Pigeons and doves stay.\n");
    write("docs/notes/other.txt", "Nothing about birds of prey here.\n");
    write("docs/data.bin", "falcon falcon falcon falcon falcon falcon");
    write("docs/falcon.csv", "falcon,falcon,falcon");

    UUID uid = enqueue(Map.of("root", "docs", "query", "falcon"));
    runUntilIdle(service, db);

    JsonNode results = results(uid);
    assertThat(paths(results)).containsExactly("docs/falcons.md", "docs/birds.txt");
    assertThat(results.get("total_hits").asLong()).isEqualTo(2);
    assertThat(results.get("query").asText()).isEqualTo("falcon");
    JsonNode best = results.get("hits").get(0);
    JsonNode second = results.get("hits").get(1);
    assertThat(best.get("title").asText()).isEqualTo("Falcons of the world");
    assertThat(best.get("score").asDouble()).isGreaterThan(second.get("score").asDouble());
    assertThat(best.get("snippets").get(0).asText())
        .contains("peregrine <mark>falcon</mark> is the fastest <mark>falcon</mark>");
    assertThat(second.get("title").asText()).isEqualTo("birds.txt");
    assertThat(second.get("snippets").get(0).asText())
        .contains("a <mark>falcon</mark> passed")
        .doesNotContain("\n");

    Job done = job(uid);
    // Three documents searched: the .md and both .txt files; .bin and .csv are not read.
    assertThat(done.itemCount).isEqualTo(3L);
    assertThat(done.result).containsEntry("hits", 2).containsEntry("total", 2);
    long textBytes =
        Files.size(base.resolve("docs/falcons.md"))
            + Files.size(base.resolve("docs/birds.txt"))
            + Files.size(base.resolve("docs/notes/other.txt"));
    assertThat(done.bytesIn).isEqualTo(textBytes);
    assertThat(done.result).doesNotContainKey("path");
  }

  @Test
  void shouldIndexTheTextOfHtmlButNotItsTagsScriptsOrStyles() throws Exception {
    write(
        "site/page.html",
        "<!doctype html><html><head><title>Raptor page</title>"
            + "<style>.falconstyle { color: red }</style>"
            + "<script>var hiddenword = 1;</script></head>"
            + "<body><div class=\"kestrelclass\" data-note=\"owlattribute\">"
            + "<h1>Hawks</h1><p>A kestrel hovers &amp; hunts &lt;mice&gt;.</p></div></body></html>");
    write(
        "site/untitled.htm",
        "<html><body><p>intro</p><h2>Night birds</h2><p>The kestrel sleeps.</p></body></html>");
    write("site/bare.html", "<p>Just a kestrel.</p>");

    UUID text = enqueue(Map.of("root", "site", "query", "kestrel"));
    UUID markup =
        enqueue(
            Map.of("root", "site", "query", "kestrelclass OR falconstyle OR hiddenword OR div"));
    UUID attribute =
        enqueue(Map.of("root", "site", "query", "owlattribute OR doctype OR body OR head"));
    runUntilIdle(service, db);

    JsonNode found = results(text);
    assertThat(paths(found))
        .containsExactlyInAnyOrder("site/page.html", "site/untitled.htm", "site/bare.html");
    for (JsonNode hit : found.get("hits")) {
      String title = hit.get("title").asText();
      String snippet = hit.get("snippets").get(0).asText();
      switch (hit.get("path").asText()) {
        case "site/page.html" -> {
          assertThat(title).isEqualTo("Raptor page");
          // The page's own text, escaped again for HTML; no tag made it into the index.
          assertThat(snippet)
              .contains("A <mark>kestrel</mark> hovers &amp; hunts &lt;mice&gt;.")
              .doesNotContain("div")
              .doesNotContain("falconstyle");
        }
        case "site/untitled.htm" -> assertThat(title).isEqualTo("Night birds");
        default -> assertThat(title).isEqualTo("bare.html");
      }
    }
    assertThat(results(markup).get("total_hits").asLong()).isZero();
    assertThat(results(attribute).get("total_hits").asLong()).isZero();
    assertThat(job(markup).itemCount).isEqualTo(3L);
  }

  @Test
  void shouldEscapeTextSnippetsAndHonourTheLimitWhileCountingEveryHit() throws Exception {
    for (int i = 0; i < 7; i++) {
      write("notes/n" + i + ".txt", "note " + i + ": an owl " + "owl ".repeat(i) + "was heard");
    }
    write("notes/markup.txt", "<b>owl</b> & \"co\" <script>alert(1)</script>");

    UUID uid = enqueue(Map.of("root", "notes", "query", "owl", "limit", 3));
    UUID all = enqueue(Map.of("root", "notes", "query", "owl"));
    runUntilIdle(service, db);

    JsonNode limited = results(uid);
    assertThat(limited.get("hits")).hasSize(3);
    assertThat(limited.get("total_hits").asLong()).isEqualTo(8);
    // Most mentions rank first.
    assertThat(paths(limited).get(0)).isEqualTo("notes/n6.txt");
    assertThat(job(uid).result).containsEntry("hits", 3).containsEntry("total", 8);

    JsonNode everything = results(all);
    assertThat(everything.get("hits")).hasSize(8);
    JsonNode markup = null;
    for (JsonNode hit : everything.get("hits")) {
      if (hit.get("path").asText().equals("notes/markup.txt")) {
        markup = hit;
      }
    }
    assertThat(markup).isNotNull();
    assertThat(markup.get("snippets").get(0).asText())
        .isEqualTo(
            "&lt;b&gt;<mark>owl</mark>&lt;/b&gt; &amp; &quot;co&quot;"
                + " &lt;script&gt;alert(1)&lt;/script&gt;");
  }

  @Test
  void shouldRankATitleMatchAboveTheSameWordInTheBodyOnly() throws Exception {
    String body = "<p>Some words about an owl that lives in the old barn by the river.</p>";
    write("guides/a.html", "<title>Bird guide</title>" + body);
    write("guides/b.html", "<title>Owl guide</title>" + body);
    write("guides/c.html", "<title>Fish guide</title>" + body);

    write("guides/d.html", "<title>Heron guide</title><p>Tall grey birds wade. They wait.</p>");

    UUID uid = enqueue(Map.of("root", "guides", "query", "owl"));
    UUID titleOnly = enqueue(Map.of("root", "guides", "query", "heron"));
    runUntilIdle(service, db);

    JsonNode results = results(uid);
    assertThat(paths(results).get(0)).isEqualTo("guides/b.html");
    assertThat(results.get("hits").get(0).get("title").asText()).isEqualTo("Owl guide");
    assertThat(results.get("total_hits").asLong()).isEqualTo(3);
    // Found by its title alone: the opening of the body stands in, with nothing marked.
    JsonNode heron = results(titleOnly).get("hits").get(0);
    assertThat(heron.get("path").asText()).isEqualTo("guides/d.html");
    assertThat(heron.get("snippets").get(0).asText()).startsWith("Tall grey birds wade.");
    assertThat(heron.get("snippets").toString()).doesNotContain("<mark>");
  }

  @Test
  void shouldFindAndCutASnippetFarIntoALongDocument() throws Exception {
    String filler = "lorem ipsum dolor sit amet consectetur ".repeat(1500); // about 58,000 chars
    write("long/book.txt", filler + "here the nightjar finally sings " + filler);

    UUID uid = enqueue(Map.of("root", "long", "query", "nightjar"));
    runUntilIdle(service, db);

    JsonNode hit = results(uid).get("hits").get(0);
    String snippet = hit.get("snippets").get(0).asText();
    assertThat(snippet).contains("the <mark>nightjar</mark> finally sings");
    assertThat(snippet).startsWith("\u2026").endsWith("\u2026");
    assertThat(snippet.length()).isLessThanOrEqualTo(SnippetFormatter.MAX_CHARS + 40);
  }

  @Test
  void shouldCutSnippetsFromALongDocumentWithManyHitsInBoundedTime() throws Exception {
    // Short capitalised sentences, a few joined by commas, 2 MB, a hit every few sentences: the
    // shape of logs and generated text. Cutting passages at the JDK's sentence boundaries backed
    // up through much of the text for every hit (minutes for a document like this one).
    Random random = new Random(7);
    String[] words = "queue archive lease replica owner status sweep claim retry page".split(" ");
    String[] ends = {".", ".", "?", "!", ","};
    StringBuilder text = new StringBuilder();
    while (text.length() < 2_000_000) {
      StringBuilder sentence = new StringBuilder();
      for (int w = 6 + random.nextInt(10); w > 0; w--) {
        sentence.append(words[random.nextInt(words.length)]).append(w > 1 ? " " : "");
      }
      sentence.setCharAt(0, Character.toUpperCase(sentence.charAt(0)));
      text.append(sentence).append(ends[random.nextInt(ends.length)]).append('\n');
    }
    write("logs/big.txt", text.toString());

    UUID uid = enqueue(Map.of("root", "logs", "query", "archive OR (lease AND replica)"));
    service.runOnce();

    assertThat(service.awaitTasks(Duration.ofSeconds(30))).as("finished within 30 s").isTrue();
    service.runOnce();
    String snippet = results(uid).get("hits").get(0).get("snippets").get(0).asText();
    assertThat(snippet).containsAnyOf("<mark>archive</mark>", "<mark>lease</mark>");
    assertThat(snippet.length()).isLessThanOrEqualTo(SnippetFormatter.MAX_CHARS + 40);
  }

  @Test
  void shouldShowTheResultProgressAndADownloadOverHttp() throws Exception {
    write("docs/a.md", "# Alpha\n\nalpha beta gamma");
    write("docs/b.txt", "beta only");

    UUID uid = enqueue(Map.of("root", "docs", "query", "beta"));
    runUntilIdle(service, db);

    Response status = given().auth().oauth2(token).get("/api/jobs/" + uid);
    status.then().statusCode(200);
    assertThat(status.<String>path("status")).isEqualTo("done");
    assertThat(status.<Float>path("progress.fraction")).isEqualTo(1.0f);
    assertThat(status.<Integer>path("item_count")).isEqualTo(2);
    assertThat(status.<Integer>path("result.hits")).isEqualTo(2);
    assertThat(status.<Integer>path("result.total")).isEqualTo(2);
    assertThat(status.asString()).doesNotContain("artifacts/deepsearch");
    String link = status.path("download_url");
    assertThat(link).isNotNull();

    Response download = given().get(link);
    download.then().statusCode(200);
    JsonNode body = json.readTree(download.asByteArray());
    assertThat(body.get("total_hits").asLong()).isEqualTo(2);
    assertThat(body.get("documents_searched").asLong()).isEqualTo(2);
    Path file = data.root().resolve((String) job(uid).result.get(JobService.RESULT_FILE));
    assertThat(status.<Integer>path("bytes_out")).isEqualTo((int) Files.size(file));
    // Nothing but the results is left in the artifact folder: no index, no partial file.
    try (Stream<Path> left = Files.list(file.getParent())) {
      assertThat(left.map(p -> p.getFileName().toString())).containsExactly("results.json");
    }
  }

  static List<String> names(Path folder) throws Exception {
    try (Stream<Path> entries = Files.list(folder)) {
      return entries.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  @Test
  void shouldLetTwoAttemptsOfOneJobSearchAtOnceAndBothLeaveValidResults() throws Exception {
    // A fuzzy clause ORed in: no prefilter, every document goes into an index of the attempt's own.
    twoAttemptsAtOnce("owl OR nest~", true);
  }

  @Test
  void shouldLetTwoPrefilteredAttemptsOfOneJobSearchAtOnceAndBothLeaveValidResults()
      throws Exception {
    // Decided from the bytes: no index, nothing in the artifact folder until the results.
    twoAttemptsAtOnce("owl", false);
  }

  void twoAttemptsAtOnce(String query, boolean indexes) throws Exception {
    write("docs/a.md", "# Barn owls\n\nThe barn owl hunts at dusk.");
    write("docs/b.txt", "An owl nests in the old barn.");
    write("docs/c.txt", "Nothing to see here.");
    UUID uid = enqueue(Map.of("root", "docs", "query", query));
    Job pending = job(uid);
    Path folder = data.root().resolve("artifacts/deepsearch/" + uid);
    // The first attempt (an old owner that lost the job but is still working) stops once it knows
    // which documents match (its index built, if it builds one), before it ranks them.
    CountDownLatch halfWay = new CountDownLatch(1);
    CountDownLatch goOn = new CountDownLatch(1);
    AtomicBoolean first = new AtomicBoolean(true);
    DeepsearchService unwrapped = ClientProxy.unwrap(service);
    unwrapped.whenDecided(
        () -> {
          if (first.getAndSet(false)) {
            halfWay.countDown();
            goOn.await(30, TimeUnit.SECONDS);
          }
        });
    CompletableFuture<Map<String, Object>> oldOwner =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return unwrapped.process(pending);
              } catch (Exception e) {
                throw new CompletionException(e);
              }
            });
    try {
      assertThat(halfWay.await(30, TimeUnit.SECONDS)).isTrue();
      List<String> firstIndex = names(folder);
      if (indexes) {
        assertThat(firstIndex).singleElement().asString().endsWith(".partial");
        Path firstIndexDir = folder.resolve(firstIndex.get(0));
        List<String> firstIndexFiles = names(firstIndexDir);
        assertThat(firstIndexFiles).isNotEmpty();

        // Meanwhile the retry runs through to the end, while the first attempt's index is there.
        runUntilIdle(service, db);
        assertThat(paths(results(uid))).containsExactlyInAnyOrder("docs/a.md", "docs/b.txt");
        assertThat(firstIndexDir).as("the first attempt's index").isDirectory();
        assertThat(names(firstIndexDir)).isEqualTo(firstIndexFiles);
      } else {
        assertThat(firstIndex).as("what the first attempt wrote so far").isEmpty();
        runUntilIdle(service, db);
        assertThat(paths(results(uid))).containsExactlyInAnyOrder("docs/a.md", "docs/b.txt");
      }
    } finally {
      goOn.countDown();
    }

    // Then the old owner finishes: it neither failed nor spoiled what is served.
    Throwable oldOwnerFailure = null;
    try {
      oldOwner.get(30, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      oldOwnerFailure = e.getCause();
    }
    String link = given().auth().oauth2(token).get("/api/jobs/" + uid).path("download_url");
    JsonNode served =
        json.readTree(given().get(link).then().statusCode(200).extract().asByteArray());
    assertThat(paths(served)).containsExactlyInAnyOrder("docs/a.md", "docs/b.txt");
    assertThat(served.get("total_hits").asLong()).isEqualTo(2);
    assertThat(oldOwnerFailure).as("the first attempt's failure").isNull();
    // Each attempt removed its own index and nothing else is left.
    assertThat(names(folder)).containsExactly("results.json");
  }

  @Test
  void shouldNotFollowLinksOutOfTheCallersFolderMadeAfterTheEnqueue() throws Exception {
    write("docs/own.txt", "my own owl");
    write("elsewhere/mine.txt", "another owl of mine");
    Files.writeString(outside.resolve("secret.txt"), "the secret owl");
    Files.createDirectories(outside.resolve("folder"));
    Files.writeString(outside.resolve("folder/deep.txt"), "a deep owl");

    UUID uid = enqueue(Map.of("root", "docs", "query", "owl"));
    Path docs = base.resolve("docs");
    Files.createSymbolicLink(docs.resolve("leak.txt"), outside.resolve("secret.txt"));
    Files.createSymbolicLink(docs.resolve("tunnel"), outside.resolve("folder"));
    Files.createSymbolicLink(docs.resolve("nowhere.txt"), outside.resolve("missing.txt"));
    Files.createSymbolicLink(docs.resolve("mine.txt"), Path.of("../elsewhere/mine.txt"));
    Files.createSymbolicLink(docs.resolve("loop"), Path.of("."));
    runUntilIdle(service, db);

    JsonNode results = results(uid);
    assertThat(paths(results)).containsExactlyInAnyOrder("docs/own.txt", "docs/mine.txt");
    assertThat(results.toString()).doesNotContain("secret").doesNotContain("deep");
    Job done = job(uid);
    assertThat(done.result).containsEntry("skipped_links", 3);
    assertThat(done.itemCount).isEqualTo(2L);
  }

  @Test
  void shouldFailWhenTheRootLeadsOutOfTheFolderByTheTimeItRuns() throws Exception {
    write("docs/own.txt", "my own owl");
    Files.writeString(outside.resolve("secret.txt"), "the secret owl");

    UUID uid = enqueue(Map.of("root", "docs", "query", "owl"));
    Trees.delete(base.resolve("docs"));
    Files.createSymbolicLink(base.resolve("docs"), outside);
    runUntilIdle(service, db);

    Job failed = job(uid);
    assertThat(failed.status).isEqualTo(JobStatus.FAILED);
    assertThat(failed.error).contains("\"docs\" leads outside your folder");
    assertThat(failed.error).doesNotContain(data.root().toString());
    assertThat(Files.exists(data.root().resolve("artifacts/deepsearch/" + uid + "/results.json")))
        .isFalse();
  }

  @Test
  void shouldRemoveTheArtifactFolderWhenTheJobExpires() throws Exception {
    write("docs/a.txt", "expiring owl");
    clock.set(Instant.parse("2026-06-01T00:00:00Z"));
    UUID uid = enqueue(Map.of("root", "docs", "query", "owl"));
    runUntilIdle(service, db);
    Path folder = data.root().resolve("artifacts/deepsearch/" + uid);
    assertThat(folder.resolve("results.json")).exists();

    clock.advance(Duration.ofDays(6));
    service.runOnce();
    assertThat(folder).exists();

    clock.advance(Duration.ofDays(2));
    assertThat(service.runOnce().swept()).isGreaterThanOrEqualTo(1);
    assertThat(folder).doesNotExist();
    assertThat(queue.getJob(uid)).isEmpty();
    // The searched files are the caller's; expiry never touches them.
    assertThat(base.resolve("docs/a.txt")).exists();
    // Cleanup is safe to repeat.
    service.cleanup(job(uid, "docs"));
  }

  /** A stand-in row for calling cleanup again once the real one is gone. */
  static Job job(UUID uid, String root) {
    Job job = new Job();
    job.uid = uid;
    job.kind = DeepsearchService.KIND;
    job.payload = Map.of("root", root, "query", "owl");
    return job;
  }
}
