package io.asyncjobs.kinds.seometa;

import static io.asyncjobs.kinds.seo.SeoFixtures.download;
import static io.asyncjobs.kinds.seo.SeoFixtures.jobsOf;
import static io.asyncjobs.kinds.seo.SeoFixtures.status;
import static io.asyncjobs.kinds.seo.SeoFixtures.unzip;
import static io.asyncjobs.kinds.seo.SeoFixtures.write;
import static io.asyncjobs.testing.Jobs.enqueue;
import static io.asyncjobs.testing.Jobs.post;
import static io.asyncjobs.testing.Jobs.runAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.asyncjobs.files.Trees;
import io.asyncjobs.kinds.seo.SeoFixtures;
import io.asyncjobs.kinds.seo.SeoFixtures.Owner;
import io.asyncjobs.storage.DataDirectory;
import io.asyncjobs.testing.Database;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.jsoup.Jsoup;
import org.jsoup.nodes.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@QuarkusTest
class SeoMetaServiceTest {

  static final String PARAGRAPHS =
      "<p>Our bakery has baked sourdough bread in the old town since 1921. Every loaf rises for"
          + " two days before it meets the oven.</p><p>We also sell pastries, cakes and coffee to"
          + " take away every morning, and on Sundays we open at seven.</p>";

  static final String RUN_ON =
      "<p>This paragraph is a single sentence that keeps going without any full stop for a very"
          + " long time, listing flour, water, salt, patience, ovens, bakers, neighbours and"
          + " customers who come back every single day</p>";

  @Inject SeoMetaService meta;
  @Inject Database db;
  @Inject DataDirectory data;
  @Inject ObjectMapper json;

  Owner owner;
  Path outside;

  @BeforeEach
  void fresh() throws IOException {
    owner = SeoFixtures.newOwner(data.root());
    outside = Files.createTempDirectory("seo-meta-outside-");
  }

  @AfterEach
  void settle() throws Exception {
    db.update("UPDATE jobs SET cancel_requested = true WHERE status = 'running'");
    meta.runOnce();
    meta.awaitTasks(Duration.ofSeconds(10));
    Trees.delete(outside);
    Trees.delete(owner.folder());
  }

  /** Pages whose titles and descriptions come from different places; returns their paths. */
  Map<String, Path> writeSite(Path site) throws IOException {
    Map<String, Path> pages = new LinkedHashMap<>();
    pages.put(
        "index.html",
        write(
            site,
            "index.html",
            "<!doctype html><html lang=en><head><meta charset=utf-8>"
                + "<title>Old Town Bakery: sourdough, pastries and coffee since 1921 | Home"
                + "</title></head><body><nav><p>Home about contact shop blog imprint</p></nav>"
                + "<main><h1>Welcome</h1>"
                + PARAGRAPHS
                + "</main></body></html>"));
    pages.put(
        "blog/winter.html",
        write(
            site,
            "blog/winter.html",
            "<html><head><meta name=description content='old text'></head><body>"
                + "<h1>Keeping a sourdough starter alive through a cold winter without fuss</h1>"
                + RUN_ON
                + "</body></html>"));
    pages.put(
        "empty.htm",
        write(site, "empty.htm", "<html><head></head><body><h2>Only a heading</h2></body></html>"));
    Instant old = Instant.parse("2023-01-02T03:04:05Z");
    for (Path page : pages.values()) {
      Files.setLastModifiedTime(page, FileTime.from(old));
    }
    return pages;
  }

  @Test
  void shouldProposeTitlesAndDescriptionsWithinTheLimitsInMetaJson() throws Exception {
    writeSite(owner.folder().resolve("www"));
    String uid = enqueue(owner.token(), "seo_meta", "{\"site\": \"www\"}");
    runAll(meta);

    Response done = status(owner.token(), uid);
    done.then()
        .body("status", equalTo("done"))
        .body("preferred_name", equalTo("www-meta.json"))
        .body("item_count", equalTo(3))
        .body("result.pages", equalTo(3))
        .body("result.copies", equalTo(false))
        .body("progress.fraction", equalTo(1.0f))
        .body("progress.items", equalTo(3));
    byte[] file = download(owner.token(), uid);
    assertThat(done.<Number>path("bytes_out").longValue()).isEqualTo(file.length);
    JsonNode metaJson = json.readTree(file);
    Map<String, JsonNode> pages = new HashMap<>();
    metaJson.get("pages").forEach(p -> pages.put(p.get("path").asText(), p));
    assertThat(pages).containsOnlyKeys("index.html", "blog/winter.html", "empty.htm");

    for (JsonNode page : pages.values()) {
      String title = page.at("/proposed/title").asText();
      assertThat(title.codePointCount(0, title.length())).isBetween(1, 60);
      assertThat(page.at("/proposed/og_title").asText()).isEqualTo(title);
      JsonNode description = page.at("/proposed/description");
      if (!description.isNull()) {
        String text = description.asText();
        assertThat(text.codePointCount(0, text.length())).isBetween(1, 155);
        // A sentence end, or a word end marked with an ellipsis.
        assertThat(text).matches("(?s).*([.!?]|\\w\u2026)");
        assertThat(page.at("/proposed/og_description").asText()).isEqualTo(text);
      }
    }
    JsonNode index = pages.get("index.html");
    assertThat(index.at("/current/title").asText()).endsWith("| Home");
    assertThat(index.at("/proposed/title").asText())
        .isEqualTo("Old Town Bakery: sourdough, pastries and coffee since 1921");
    assertThat(index.at("/current/description").isNull()).isTrue();
    // Two whole sentences fit; the third would not.
    assertThat(index.at("/proposed/description").asText())
        .isEqualTo(
            "Our bakery has baked sourdough bread in the old town since 1921. Every loaf rises"
                + " for two days before it meets the oven.");

    JsonNode winter = pages.get("blog/winter.html");
    assertThat(winter.get("title_source").asText()).isEqualTo("h1");
    assertThat(winter.at("/current/description").asText()).isEqualTo("old text");
    String cut = winter.at("/proposed/description").asText();
    assertThat(cut).endsWith("\u2026");
    String kept = cut.substring(0, cut.length() - 1);
    String original = Jsoup.parse(RUN_ON).text();
    assertThat(original).startsWith(kept);
    assertThat(original.charAt(kept.length())).isIn(' ', ',');

    JsonNode empty = pages.get("empty.htm");
    assertThat(empty.at("/proposed/title").asText()).isEqualTo("Only a heading");
    assertThat(empty.at("/proposed/description").isNull()).isTrue();
    assertThat(empty.get("description_source").asText()).isEqualTo("none");
  }

  @Test
  void shouldZipPatchedCopiesAndNeverTouchTheOriginals() throws Exception {
    Map<String, Path> originals = writeSite(owner.folder().resolve("www"));
    Map<String, byte[]> bytesBefore = new HashMap<>();
    Map<String, FileTime> timesBefore = new HashMap<>();
    for (Map.Entry<String, Path> page : originals.entrySet()) {
      bytesBefore.put(page.getKey(), Files.readAllBytes(page.getValue()));
      timesBefore.put(page.getKey(), Files.getLastModifiedTime(page.getValue()));
    }
    String uid = enqueue(owner.token(), "seo_meta", "{\"site\": \"www\", \"write_copies\": true}");
    runAll(meta);

    status(owner.token(), uid)
        .then()
        .body("status", equalTo("done"))
        .body("preferred_name", equalTo("www-meta.zip"))
        .body("result.copies", equalTo(true));
    Map<String, byte[]> zip = unzip(download(owner.token(), uid));
    assertThat(zip)
        .containsOnlyKeys(
            "meta.json", "pages/index.html", "pages/blog/winter.html", "pages/empty.htm");
    JsonNode metaJson = json.readTree(zip.get("meta.json"));
    Map<String, JsonNode> proposals = new HashMap<>();
    metaJson.get("pages").forEach(p -> proposals.put(p.get("path").asText(), p));

    for (String path : originals.keySet()) {
      Document copy = Jsoup.parse(new String(zip.get("pages/" + path), StandardCharsets.UTF_8));
      JsonNode proposed = proposals.get(path).get("proposed");
      assertThat(proposals.get(path).get("copy").asText()).isEqualTo("pages/" + path);
      assertThat(copy.title()).isEqualTo(proposed.get("title").asText());
      assertThat(copy.head().select("title")).hasSize(1);
      assertThat(copy.head().selectFirst("meta[property=og:title]").attr("content"))
          .isEqualTo(proposed.get("title").asText());
      if (!proposed.get("description").isNull()) {
        assertThat(copy.head().select("meta[name=description]")).hasSize(1);
        assertThat(copy.head().selectFirst("meta[name=description]").attr("content"))
            .isEqualTo(proposed.get("description").asText());
        assertThat(copy.head().selectFirst("meta[property=og:description]").attr("content"))
            .isEqualTo(proposed.get("description").asText());
      }
      // The page's content is still there.
      assertThat(copy.body().text()).isNotBlank();
    }

    for (Map.Entry<String, Path> page : originals.entrySet()) {
      assertThat(Arrays.equals(Files.readAllBytes(page.getValue()), bytesBefore.get(page.getKey())))
          .as("%s unchanged", page.getKey())
          .isTrue();
      assertThat(Files.getLastModifiedTime(page.getValue()))
          .isEqualTo(timesBefore.get(page.getKey()));
    }
    try (var listing = Files.walk(owner.folder())) {
      assertThat(listing.filter(Files::isRegularFile)).hasSize(originals.size());
    }
  }

  @Test
  void shouldNameNoZipEntryWithABackslashSoNoCopyUnpacksOutsideItsFolderOnWindows()
      throws Exception {
    Path site = owner.folder().resolve("www");
    write(site, "index.html", "<title>Inside</title>");
    // A legal file name here; to a Windows extractor, two steps up and out of pages/.
    write(site, "..\\..\\evil.html", "<title>Evil</title>");
    String uid = enqueue(owner.token(), "seo_meta", "{\"site\": \"www\", \"write_copies\": true}");
    runAll(meta);

    status(owner.token(), uid)
        .then()
        .body("status", equalTo("done"))
        .body("result.pages", equalTo(2));
    Map<String, byte[]> zip = unzip(download(owner.token(), uid));
    assertThat(zip.keySet()).noneMatch(name -> name.contains("\\"));
    assertThat(zip).containsOnlyKeys("meta.json", "pages/index.html", "pages/.._.._evil.html");
    JsonNode metaJson = json.readTree(zip.get("meta.json"));
    Map<String, String> copies = new HashMap<>();
    metaJson.get("pages").forEach(p -> copies.put(p.get("path").asText(), p.get("copy").asText()));
    // meta.json names the page as it is and the copy as the zip holds it.
    assertThat(copies).containsEntry("..\\..\\evil.html", "pages/.._.._evil.html");
  }

  @Test
  void shouldRefuseEveryBadPayloadWith400AndEnqueueNothing() throws Exception {
    Path folder = owner.folder();
    writeSite(folder.resolve("www"));
    write(folder, "page.html", "<title>a file</title>");
    Files.createSymbolicLink(folder.resolve("escape"), outside);

    Map<String, String> refused = new LinkedHashMap<>();
    refused.put("{}", "site is required");
    refused.put("{\"site\": \"page.html\"}", "not a folder");
    refused.put("{\"site\": \"missing\"}", "does not exist");
    refused.put("{\"site\": \"www\", \"base_url\": \"https://example.com/\"}", "unknown field");
    refused.put("{\"site\": \"www\", \"scope\": \"files\"}", "unknown field scope");
    refused.put("{\"site\": 1}", "site must be a non-empty string");
    refused.put("{\"site\": \"www\", \"write_copies\": \"yes\"}", "write_copies must be true");
    refused.put("{\"site\": \"www\", \"write_copies\": 1}", "write_copies must be true");
    refused.put("{\"site\": \"/tmp\"}", "absolute");
    refused.put("{\"site\": \"../..\"}", "outside your folder");
    refused.put("{\"site\": \"escape\"}", "outside your folder");
    for (Map.Entry<String, String> bad : refused.entrySet()) {
      post(owner.token(), "seo_meta", bad.getKey())
          .then()
          .statusCode(400)
          .body("detail", containsString(bad.getValue()));
    }
    assertThat(jobsOf(db, owner)).isZero();
  }

  @Test
  void shouldNotFollowALinkOutOfTheFolderThatAppearsAfterTheEnqueue() throws Exception {
    Path site = owner.folder().resolve("www");
    write(site, "index.html", "<title>Inside</title>");
    write(outside, "secret.html", "<title>SECRET OUTSIDE</title>");
    String uid = enqueue(owner.token(), "seo_meta", "{\"site\": \"www\", \"write_copies\": true}");
    Files.createSymbolicLink(site.resolve("leak.html"), outside.resolve("secret.html"));
    Files.createSymbolicLink(site.resolve("leakdir"), outside);
    runAll(meta);

    status(owner.token(), uid)
        .then()
        .body("status", equalTo("done"))
        .body("result.pages", equalTo(1))
        .body("result.links_skipped", equalTo(2));
    Map<String, byte[]> zip = unzip(download(owner.token(), uid));
    assertThat(zip).containsOnlyKeys("meta.json", "pages/index.html");
    assertThat(new String(zip.get("meta.json"), StandardCharsets.UTF_8)).doesNotContain("SECRET");
  }

  @Test
  void shouldRemoveTheArtifactFolderWhenTheJobExpires() throws Exception {
    writeSite(owner.folder().resolve("www"));
    String uid = enqueue(owner.token(), "seo_meta", "{\"site\": \"www\", \"write_copies\": true}");
    runAll(meta);
    Path folder = data.root().resolve("artifacts/seo_meta/" + uid);
    assertThat(folder.resolve(SeoMetaService.META_ZIP)).isRegularFile();

    db.update(
        "UPDATE jobs SET expires_at = now() - interval '1 minute' WHERE uid = ?",
        UUID.fromString(uid));
    assertThat(meta.runOnce().swept()).isPositive();
    assertThat(folder).doesNotExist();
    // The pages the job read are still there.
    assertThat(owner.folder().resolve("www/index.html")).isRegularFile();
  }
}
