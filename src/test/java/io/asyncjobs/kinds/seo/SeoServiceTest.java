package io.asyncjobs.kinds.seo;

import static io.asyncjobs.kinds.seo.SeoFixtures.download;
import static io.asyncjobs.kinds.seo.SeoFixtures.jobsOf;
import static io.asyncjobs.kinds.seo.SeoFixtures.status;
import static io.asyncjobs.kinds.seo.SeoFixtures.unzip;
import static io.asyncjobs.kinds.seo.SeoFixtures.write;
import static io.asyncjobs.testing.Jobs.enqueue;
import static io.asyncjobs.testing.Jobs.post;
import static io.asyncjobs.testing.Jobs.runAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.asyncjobs.files.Trees;
import io.asyncjobs.kinds.seo.SeoFixtures.Owner;
import io.asyncjobs.storage.DataDirectory;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.transform.stream.StreamSource;
import javax.xml.validation.SchemaFactory;
import javax.xml.validation.Validator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import org.xml.sax.SAXException;

@QuarkusTest
class SeoServiceTest {

  static final String NS = "http://www.sitemaps.org/schemas/sitemap/0.9";
  static final String DESCRIPTION =
      "<meta name=description content=\"A description long enough to pass the check, and short"
          + " enough too.\">";

  @Inject SeoService seo;
  @Inject Database db;
  @Inject DataDirectory data;
  @Inject ObjectMapper json;

  Owner owner;
  Path outside;

  @BeforeEach
  void fresh() throws IOException {
    owner = SeoFixtures.newOwner(data.root());
    outside = Files.createTempDirectory("seo-outside-");
  }

  @AfterEach
  void settle() throws Exception {
    db.update("UPDATE jobs SET cancel_requested = true WHERE status = 'running'");
    seo.runOnce();
    seo.awaitTasks(Duration.ofSeconds(10));
    Trees.delete(outside);
    Trees.delete(owner.folder());
  }

  /** A small site with one problem of each kind the checks know. */
  Map<String, Long> writeSite(Path site) throws IOException {
    Map<String, String> pages = new HashMap<>();
    pages.put(
        "index.html",
        "<!doctype html><html><head><title>Home of the example shop</title>"
            + DESCRIPTION
            + "<link rel=canonical href='https://www.example.com/shop/'></head><body>"
            + "<h1>Welcome</h1><img src=logo.png alt='The logo'>"
            + "<a href='about.html'>about</a> <a href='blog/'>blog</a>"
            + " <a href='missing.html'>gone</a> <a href='blog/post.html#comments'>comments</a>"
            + " <a href='blog/post.html#nope'>nope</a> <a href='logo.png'>logo</a>"
            + " <a href='https://elsewhere.example/'>out</a></body></html>");
    pages.put(
        "about.html",
        "<html><head>"
            + DESCRIPTION
            + "</head><body><h1>About</h1><h1>Us</h1><img src=team.jpg></body></html>");
    pages.put(
        "blog/index.html",
        "<title>Shared title</title>" + DESCRIPTION + "<h1>Blog</h1><a href=post.html>post</a>");
    pages.put(
        "blog/post.html",
        "<title>Shared title</title>"
            + DESCRIPTION
            + "<h1>Post</h1><section id=comments></section><a href='../index.html'>home</a>");
    pages.put(
        "contact.html", "<title>Contact us, \"today\"</title>" + DESCRIPTION + "<h1>Contact</h1>");
    pages.put(
        "private.html",
        "<title>Private</title><meta name=robots content=noindex>" + DESCRIPTION + "<h1>P</h1>");
    Map<String, Long> sizes = new HashMap<>();
    for (Map.Entry<String, String> page : pages.entrySet()) {
      sizes.put(page.getKey(), Files.size(write(site, page.getKey(), page.getValue())));
    }
    Files.write(site.resolve("logo.png"), new byte[] {1, 2, 3});
    Files.setLastModifiedTime(
        site.resolve("index.html"), FileTime.from(Instant.parse("2024-03-01T12:00:00.500Z")));
    return sizes;
  }

  @Test
  void shouldAuditASiteAndLeaveAZipWithReportsAndAValidSitemap() throws Exception {
    Map<String, Long> sizes = writeSite(owner.folder().resolve("www"));
    Response accepted =
        post(
            owner.token(),
            "seo",
            "{\"site\": \"www\", \"base_url\": \"https://www.example.com/shop\"}");
    accepted.then().statusCode(202).body("kind", equalTo("seo"));
    String uid = accepted.path("uid");

    runAll(seo);

    Response done = status(owner.token(), uid);
    done.then()
        .statusCode(200)
        .body("status", equalTo("done"))
        .body("preferred_name", equalTo("www-seo.zip"))
        .body("item_count", equalTo(6))
        .body("result.pages", equalTo(6))
        .body("result.sitemap", equalTo(true))
        .body("result.sitemap_urls", equalTo(5))
        .body("result.issues.title_missing", equalTo(1))
        .body("result.issues.title_duplicate", equalTo(2))
        .body("result.issues.broken_link", equalTo(1))
        .body("result.issues.broken_anchor", equalTo(1))
        .body("result.issues.image_without_alt", equalTo(1))
        .body("result.issues.noindex", equalTo(1))
        .body("progress.fraction", equalTo(1.0f))
        .body("progress.items", equalTo(6));
    long htmlBytes = sizes.values().stream().mapToLong(Long::longValue).sum();
    assertThat(done.<Number>path("bytes_in").longValue()).isEqualTo(htmlBytes);

    byte[] zipBytes = download(owner.token(), uid);
    assertThat(done.<Number>path("bytes_out").longValue()).isEqualTo(zipBytes.length);
    Map<String, byte[]> zip = unzip(zipBytes);
    assertThat(zip).containsOnlyKeys("report.json", "report.csv", "sitemap.xml");

    // report.json: findings per page, naming what is wrong.
    JsonNode report = json.readTree(zip.get("report.json"));
    Map<String, JsonNode> pages = new HashMap<>();
    report.get("pages").forEach(p -> pages.put(p.get("path").asText(), p));
    assertThat(pages.keySet())
        .containsExactlyInAnyOrder(
            "index.html",
            "about.html",
            "blog/index.html",
            "blog/post.html",
            "contact.html",
            "private.html");
    assertThat(findings(pages.get("about.html")))
        .contains("title_missing", "h1_multiple", "image_without_alt:team.jpg");
    assertThat(findings(pages.get("blog/index.html"))).contains("title_duplicate");
    assertThat(findings(pages.get("blog/post.html"))).contains("title_duplicate");
    assertThat(findings(pages.get("index.html")))
        .contains("broken_link:missing.html", "broken_anchor:blog/post.html#nope")
        .doesNotContain("canonical_missing", "canonical_elsewhere");
    assertThat(pages.get("index.html").get("score").asInt()).isEqualTo(100 - 5 - 3);
    assertThat(pages.get("private.html").get("in_sitemap").asBoolean()).isFalse();
    double mean =
        pages.values().stream().mapToInt(p -> p.get("score").asInt()).average().orElseThrow();
    assertThat(report.get("site_score").asDouble()).isEqualTo(Math.round(mean * 10) / 10.0);
    assertThat(done.<Number>path("result.site_score").doubleValue())
        .isCloseTo(report.get("site_score").asDouble(), within(1e-4));

    // report.csv: one row per page; a title with a comma and quotes survives the round trip.
    List<List<String>> rows = parseCsv(new String(zip.get("report.csv"), StandardCharsets.UTF_8));
    assertThat(rows.get(0)).startsWith("path", "score", "issues", "title");
    assertThat(rows).hasSize(7);
    Map<String, List<String>> byPath = new HashMap<>();
    for (List<String> row : rows.subList(1, rows.size())) {
      assertThat(row).hasSameSizeAs(rows.get(0));
      byPath.put(row.get(0), row);
    }
    assertThat(byPath.get("contact.html").get(3)).isEqualTo("Contact us, \"today\"");
    int brokenLinkColumn = rows.get(0).indexOf("broken_link");
    assertThat(byPath.get("index.html").get(brokenLinkColumn)).isEqualTo("1");

    // sitemap.xml: valid, absolute, escaped, noindex left out.
    byte[] sitemap = zip.get("sitemap.xml");
    Validator validator =
        SchemaFactory.newInstance(XMLConstants.W3C_XML_SCHEMA_NS_URI)
            .newSchema(getClass().getResource("/sitemaps/sitemap-0.9.xsd"))
            .newValidator();
    validator.validate(new StreamSource(new ByteArrayInputStream(sitemap)));
    // The schema does refuse what the protocol refuses: a relative loc, a local time.
    for (String bad :
        List.of(
            "<loc>about.html</loc>",
            "<loc>https://www.example.com/</loc><lastmod>yesterday</lastmod>")) {
      String xml = "<urlset xmlns='" + NS + "'><url>" + bad + "</url></urlset>";
      assertThatThrownBy(
              () ->
                  validator.validate(
                      new StreamSource(
                          new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)))))
          .isInstanceOf(SAXException.class);
    }
    DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
    factory.setNamespaceAware(true);
    org.w3c.dom.Document doc =
        factory.newDocumentBuilder().parse(new ByteArrayInputStream(sitemap));
    assertThat(doc.getDocumentElement().getLocalName()).isEqualTo("urlset");
    assertThat(doc.getDocumentElement().getNamespaceURI()).isEqualTo(NS);
    NodeList urls = doc.getElementsByTagNameNS(NS, "url");
    Map<String, String> lastmods = new HashMap<>();
    for (int i = 0; i < urls.getLength(); i++) {
      Element url = (Element) urls.item(i);
      lastmods.put(
          url.getElementsByTagNameNS(NS, "loc").item(0).getTextContent(),
          url.getElementsByTagNameNS(NS, "lastmod").item(0).getTextContent());
    }
    assertThat(lastmods.keySet())
        .containsExactlyInAnyOrder(
            "https://www.example.com/shop/",
            "https://www.example.com/shop/about.html",
            "https://www.example.com/shop/blog/",
            "https://www.example.com/shop/blog/post.html",
            "https://www.example.com/shop/contact.html");
    assertThat(lastmods.get("https://www.example.com/shop/")).isEqualTo("2024-03-01T12:00:00Z");
    assertThat(lastmods.values())
        .allMatch(d -> d.matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ"));
  }

  @Test
  void shouldLeaveTheSitemapOutAndSaySoWithoutABaseUrl() throws Exception {
    writeSite(owner.folder().resolve("www"));
    String uid = enqueue(owner.token(), "seo", "{\"site\": \"www\"}");
    runAll(seo);

    status(owner.token(), uid)
        .then()
        .body("status", equalTo("done"))
        .body("result.sitemap", equalTo(false))
        .body("result.pages", equalTo(6));
    Map<String, byte[]> zip = unzip(download(owner.token(), uid));
    assertThat(zip).containsOnlyKeys("report.json", "report.csv");
    JsonNode report = json.readTree(zip.get("report.json"));
    assertThat(report.get("sitemap").get("note").asText()).contains("base_url");
    // Without a base URL the canonical's host is not compared: the home page still points at
    // itself.
    JsonNode home = null;
    for (JsonNode page : report.get("pages")) {
      if (page.get("path").asText().equals("index.html")) {
        home = page;
      }
    }
    assertThat(findings(home)).doesNotContain("canonical_elsewhere");
  }

  @Test
  void shouldRefuseEveryBadPayloadWith400AndEnqueueNothing() throws Exception {
    Path folder = owner.folder();
    writeSite(folder.resolve("www"));
    write(folder, "page.html", "<title>a file, not a folder</title>");
    Files.createDirectories(outside.resolve("site"));
    write(outside, "site/index.html", "<title>outside</title>");
    Files.createSymbolicLink(folder.resolve("escape"), outside);
    Owner other = SeoFixtures.newOwner(data.root());
    Files.createDirectories(other.folder().resolve("www"));
    String otherSegment = other.folder().getFileName().toString();

    Map<String, String> refused = new java.util.LinkedHashMap<>();
    refused.put("{}", "site is required");
    refused.put("{\"site\": \"page.html\"}", "not a folder");
    refused.put("{\"site\": \"nothing-here\"}", "does not exist");
    refused.put("{\"site\": \"www\", \"depth\": 2}", "unknown field depth");
    refused.put("{\"site\": \"www\", \"scope\": \"files\"}", "unknown field scope");
    refused.put("{\"site\": 5}", "site must be a non-empty string");
    refused.put("{\"site\": [\"www\"]}", "site must be a non-empty string");
    refused.put("{\"site\": \"\"}", "site must be a non-empty string");
    refused.put("{\"site\": \"www\", \"base_url\": 7}", "base_url must be a non-empty string");
    refused.put("{\"site\": \"www\", \"base_url\": \"ftp://example.com/\"}", "base_url must be");
    refused.put("{\"site\": \"www\", \"base_url\": \"example.com\"}", "base_url must be");
    refused.put("{\"site\": \"/etc\"}", "absolute");
    refused.put("{\"site\": \"../" + otherSegment + "/www\"}", "outside your folder");
    refused.put("{\"site\": \"www/../../x\"}", "outside your folder");
    refused.put("{\"site\": \"escape\"}", "outside your folder");
    refused.put("{\"site\": \"escape/site\"}", "outside your folder");
    for (Map.Entry<String, String> bad : refused.entrySet()) {
      post(owner.token(), "seo", bad.getKey())
          .then()
          .statusCode(400)
          .contentType("application/problem+json")
          .body("detail", containsString(bad.getValue()));
    }
    // Not a JSON object at all.
    post(owner.token(), "seo", "[\"www\"]").then().statusCode(400);
    post(owner.token(), "seo", "null").then().statusCode(400);

    assertThat(jobsOf(db, owner)).isZero();
    // The same caller's good request still goes through.
    enqueue(owner.token(), "seo", "{\"site\": \"www\"}");
    assertThat(jobsOf(db, owner)).isOne();
  }

  @Test
  void shouldNotFollowALinkOutOfTheFolderThatAppearsAfterTheEnqueue() throws Exception {
    Path site = owner.folder().resolve("www");
    write(site, "index.html", "<title>Inside</title><h1>in</h1>");
    write(owner.folder(), "shared/kept.html", "<title>Kept</title><h1>kept</h1>");
    write(outside, "secret.html", "<title>SECRET OUTSIDE</title>");
    write(outside, "more/deep.html", "<title>SECRET DEEP</title>");
    String uid = enqueue(owner.token(), "seo", "{\"site\": \"www\"}");

    // Between the enqueue and the run, links appear: two lead out, one stays in the folder.
    Files.createSymbolicLink(site.resolve("leak.html"), outside.resolve("secret.html"));
    Files.createSymbolicLink(site.resolve("leakdir"), outside);
    Files.createSymbolicLink(site.resolve("kept.html"), owner.folder().resolve("shared/kept.html"));
    runAll(seo);

    status(owner.token(), uid)
        .then()
        .body("status", equalTo("done"))
        .body("result.pages", equalTo(2))
        .body("result.links_skipped", equalTo(2));
    byte[] reportJson = unzip(download(owner.token(), uid)).get("report.json");
    String report = new String(reportJson, StandardCharsets.UTF_8);
    assertThat(report).contains("\"kept.html\"", "\"index.html\"");
    assertThat(report).doesNotContain("SECRET", "leak");
  }

  @Test
  void shouldAuditEachRealPageOnceHoweverManyLinksLeadToIt() throws Exception {
    Path site = owner.folder().resolve("www");
    // Five folders, each with a page and nine links to the next one: followed blindly, that is
    // 1 + 9 + 81 + 729 + 6561 ways to reach the last page, and each folder also has a fan of nine
    // links back at itself.
    for (int level = 0; level < 5; level++) {
      Path folder = site.resolve("d" + level);
      write(
          folder,
          "index.html",
          "<title>Level "
              + level
              + "</title><h1>Level</h1><a href='l1/'>next</a>"
              + " <a href='l1/l2/l3/index.html'>further</a> <a href='self5/index.html'>me</a>");
      for (int link = 1; link <= 9; link++) {
        if (level < 4) {
          Files.createSymbolicLink(folder.resolve("l" + link), Path.of("../d" + (level + 1)));
        }
        Files.createSymbolicLink(folder.resolve("self" + link), Path.of("."));
      }
    }
    Files.createSymbolicLink(site.resolve("latest.html"), Path.of("d0/index.html"));
    String uid = enqueue(owner.token(), "seo", "{\"site\": \"www\"}");
    runAll(seo);

    status(owner.token(), uid)
        .then()
        .body("status", equalTo("done"))
        .body("result.pages", equalTo(5))
        // 4 x 9 links to the next folder, 5 x 9 back at their own, one to a page already seen
        .body("result.links_skipped", equalTo(36 + 45 + 1))
        // Links through links resolve; only those that go past the last folder are broken: two on
        // d4, "further" on d3 and d2.
        .body("result.issues.broken_link", equalTo(4));
    JsonNode report = json.readTree(unzip(download(owner.token(), uid)).get("report.json"));
    List<String> audited = new ArrayList<>();
    report.get("pages").forEach(page -> audited.add(page.get("path").asText()));
    assertThat(audited)
        .containsExactly(
            "d0/index.html", "d1/index.html", "d2/index.html", "d3/index.html", "d4/index.html");
  }

  @Test
  void shouldFailTheJobWhenTheSiteItselfLeadsOutByTheTimeItRuns() throws Exception {
    Path site = owner.folder().resolve("www");
    write(site, "index.html", "<title>Inside</title>");
    write(outside, "index.html", "<title>SECRET</title>");
    String uid = enqueue(owner.token(), "seo", "{\"site\": \"www\"}");

    Trees.delete(site);
    Files.createSymbolicLink(site, outside);
    runAll(seo);

    status(owner.token(), uid)
        .then()
        .body("status", equalTo("failed"))
        .body("error", containsString("leads outside your folder"))
        .body("download_url", org.hamcrest.Matchers.nullValue());
    assertThat(data.root().resolve("artifacts/seo/" + uid)).doesNotExist();
  }

  @Test
  void shouldSkipAPageTooLargeToParseButStillCountLinksToItAsGood() throws Exception {
    Path site = owner.folder().resolve("www");
    write(site, "index.html", "<title>Small</title><h1>x</h1><a href='huge.html#part'>huge</a>");
    byte[] huge = new byte[(int) SiteFiles.MAX_PAGE_BYTES + 1];
    java.util.Arrays.fill(huge, (byte) 'x');
    Files.write(site.resolve("huge.html"), huge);
    String uid = enqueue(owner.token(), "seo", "{\"site\": \"www\"}");
    runAll(seo);

    status(owner.token(), uid)
        .then()
        .body("status", equalTo("done"))
        .body("result.pages", equalTo(1))
        .body("result.pages_too_large", equalTo(1))
        .body("result.issues.broken_link", equalTo(0))
        .body("result.issues.broken_anchor", equalTo(0))
        .body("progress.fraction", equalTo(1.0f))
        .body("progress.items", equalTo(1));
    JsonNode report = json.readTree(unzip(download(owner.token(), uid)).get("report.json"));
    assertThat(report.get("pages_too_large").get(0).asText()).isEqualTo("huge.html");
  }

  @Test
  void shouldLetAnAdminAuditAnyOwnersSiteByItsFullPath() throws Exception {
    write(owner.folder().resolve("www"), "index.html", "<title>Owned</title><h1>x</h1>");
    String admin = Tokens.admin("seo-admin-" + UUID.randomUUID());
    String path = "user/" + owner.folder().getFileName() + "/www";
    String uid = enqueue(admin, "seo", "{\"site\": \"" + path + "\"}");
    runAll(seo);
    status(admin, uid).then().body("status", equalTo("done")).body("result.pages", equalTo(1));
  }

  @Test
  void shouldRemoveTheArtifactFolderWhenTheJobExpires() throws Exception {
    write(owner.folder().resolve("www"), "index.html", "<title>Short-lived</title>");
    String uid = enqueue(owner.token(), "seo", "{\"site\": \"www\"}");
    runAll(seo);
    Path folder = data.root().resolve("artifacts/seo/" + uid);
    assertThat(folder.resolve(SeoService.ARTIFACT)).isRegularFile();
    assertThat(folder).isDirectoryNotContaining("glob:**.partial");

    db.update(
        "UPDATE jobs SET expires_at = now() - interval '1 minute' WHERE uid = ?",
        UUID.fromString(uid));
    // Other test classes may leave expired jobs of this kind behind; they are swept too.
    assertThat(seo.runOnce().swept()).isPositive();

    assertThat(folder).doesNotExist();
    assertThat(db.query("SELECT uid FROM jobs WHERE uid = ?", UUID.fromString(uid))).isEmpty();
    // A second cleanup of the same job finds nothing to do and does not fail.
    seo.cleanup(jobStub(uid));
  }

  private static io.asyncjobs.queue.Job jobStub(String uid) {
    io.asyncjobs.queue.Job job = new io.asyncjobs.queue.Job();
    job.uid = UUID.fromString(uid);
    job.kind = SeoService.KIND;
    return job;
  }

  /** A page's findings as "check" and "check:detail" strings. */
  static List<String> findings(JsonNode page) {
    List<String> out = new ArrayList<>();
    for (JsonNode f : page.get("findings")) {
      out.add(f.get("check").asText());
      out.add(f.get("check").asText() + ":" + f.get("detail").asText());
    }
    return out;
  }

  /** RFC 4180: quoted fields may hold commas, doubled quotes and line breaks; rows end in CRLF. */
  static List<List<String>> parseCsv(String text) {
    List<List<String>> rows = new ArrayList<>();
    List<String> row = new ArrayList<>();
    StringBuilder field = new StringBuilder();
    boolean quoted = false;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (quoted) {
        if (c == '"' && i + 1 < text.length() && text.charAt(i + 1) == '"') {
          field.append('"');
          i++;
        } else if (c == '"') {
          quoted = false;
        } else {
          field.append(c);
        }
      } else if (c == '"') {
        assertThat(field).as("a quote only opens a field").isEmpty();
        quoted = true;
      } else if (c == ',') {
        row.add(field.toString());
        field.setLength(0);
      } else if (c == '\r' && i + 1 < text.length() && text.charAt(i + 1) == '\n') {
        row.add(field.toString());
        field.setLength(0);
        rows.add(row);
        row = new ArrayList<>();
        i++;
      } else {
        field.append(c);
      }
    }
    assertThat(quoted).as("no field left open").isFalse();
    assertThat(field).as("the last row ends with CRLF").isEmpty();
    return rows;
  }
}
