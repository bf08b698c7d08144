package io.asyncjobs.kinds.seo;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.asyncjobs.files.Artifacts;
import io.asyncjobs.files.FileScopes;
import io.asyncjobs.files.Payloads;
import io.asyncjobs.kinds.seo.SeoAudit.PageFacts;
import io.asyncjobs.kinds.seo.SeoAudit.PageReport;
import io.asyncjobs.queue.Job;
import io.asyncjobs.time.Clock;
import jakarta.inject.Singleton;
import java.io.BufferedOutputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.ZipOutputStream;

/**
 * The {@code seo} kind: audits a folder of HTML pages in the caller's scope (titles, meta
 * descriptions, headings, image alt texts, canonical URLs, noindex, broken internal links and
 * anchors), scores each page and the site, and leaves one zip of {@code report.json}, {@code
 * report.csv} and, when the payload gives a {@code base_url}, a {@code sitemap.xml}.
 */
@Singleton
public class SeoService extends SiteKind {

  /** This kind's name. */
  public static final String KIND = "seo";

  /** The payload key of the optional base URL the site is published under. */
  public static final String BASE_URL = "base_url";

  /** Longest base URL a payload may give. */
  public static final int MAX_BASE_URL_LENGTH = 2000;

  /** The payload keys a caller may send. */
  static final Set<String> KEYS = Set.of(SiteFiles.SITE, BASE_URL);

  /** The artifact's file name inside the job's artifact folder. */
  static final String ARTIFACT = "seo-report.zip";

  SeoService(FileScopes scopes, Artifacts artifacts, ObjectMapper json, Clock clock) {
    super(KIND, "SEO audit", KEYS, scopes, artifacts, json, clock);
  }

  @Override
  public RouteDoc routeDoc() {
    return new RouteDoc(
        "Enqueue an SEO audit",
        """
        Audits every .html/.htm page under site (a folder relative to your own folder): \
        titles, meta descriptions, h1, image alt, canonical, noindex, broken internal links \
        and anchors. The result is a zip of report.json, report.csv and, with base_url, \
        sitemap.xml.""",
        "with a sitemap",
        "{\"site\": \"www\", \"base_url\": \"https://www.example.com/\"}",
        """
        {"type": "object", "required": ["site"], "additionalProperties": false,
         "properties": {
           "site": {"type": "string", "minLength": 1, "maxLength": %d, "pattern": "%s",
                    "description": "a folder of your tree holding the pages"},
           "base_url": {"type": "string", "format": "uri", "maxLength": %d,
                        "description": "the site's public address, for sitemap.xml"}}}"""
            .formatted(SiteFiles.MAX_SITE_LENGTH, Payloads.NOT_BLANK, MAX_BASE_URL_LENGTH),
        Map.of());
  }

  /** A well-formed {@code base_url} when given. */
  @Override
  protected String checkOptions(Map<String, Object> body) {
    baseUrl(body);
    return "-seo.zip";
  }

  /** The payload's base URL, normalized, or null when absent. */
  static URI baseUrl(Map<String, Object> payload) {
    return Payloads.optionalString(payload, BASE_URL, MAX_BASE_URL_LENGTH)
        .map(SiteUrls::parseBase)
        .orElse(null);
  }

  @Override
  protected Map<String, Object> process(Job job) throws Exception {
    SiteUrls urls = new SiteUrls(baseUrl(job.payload));
    SiteFiles files = scanSite(job);
    List<PageFacts> facts = new ArrayList<>(files.pages().size());
    Set<String> unparsed = new HashSet<>(files.tooLarge());
    // The last tenth is the cross-page checks and the zip.
    long bytesIn =
        readPages(
            files,
            0.9,
            (page, bytes, doc) -> {
              if (doc == null) {
                unparsed.add(page.path()); // not audited
              } else {
                facts.add(SeoAudit.facts(page.path(), bytes.length, page.modified(), doc));
              }
            });

    List<PageReport> reports = SeoAudit.audit(facts, files::lookup, unparsed, urls);
    Instant now = clock.now();
    String siteName = (String) job.payload.get(SiteFiles.SITE);

    Map<String, byte[]> sitemapFiles = new LinkedHashMap<>();
    Map<String, Object> sitemap = new LinkedHashMap<>();
    int sitemapUrls = 0;
    if (urls.base() != null) {
      List<SeoReports.SitemapUrl> listed = SeoReports.sitemapUrls(reports, urls);
      sitemapUrls = listed.size();
      if (listed.size() <= SeoReports.SITEMAP_MAX_URLS) {
        sitemapFiles.put("sitemap.xml", SeoReports.urlset(listed));
      } else {
        List<String> locs = new ArrayList<>();
        for (int from = 0, n = 1; from < listed.size(); from += SeoReports.SITEMAP_MAX_URLS, n++) {
          String name = "sitemap-" + n + ".xml";
          int to = Math.min(listed.size(), from + SeoReports.SITEMAP_MAX_URLS);
          sitemapFiles.put(name, SeoReports.urlset(listed.subList(from, to)));
          locs.add(urls.base() + name);
        }
        sitemapFiles.put("sitemap.xml", SeoReports.sitemapIndex(locs, now));
      }
      sitemap.put("files", List.copyOf(sitemapFiles.keySet()));
      sitemap.put("urls", sitemapUrls);
    } else {
      sitemap.put("files", List.of());
      sitemap.put("urls", 0);
      sitemap.put(
          "note", "no sitemap.xml: a sitemap lists absolute URLs; give base_url to get one");
    }

    Map<String, Object> report = SeoReports.json(siteName, urls, reports, files, sitemap, now);
    Path target = artifacts.folder(KIND, job.uid).resolve(ARTIFACT);
    Path partial = Artifacts.partial(target);
    try {
      try (OutputStream file = new BufferedOutputStream(Files.newOutputStream(partial), 1 << 16);
          ZipOutputStream zip = new ZipOutputStream(file)) {
        zipEntry(
            zip, "report.json", json.writerWithDefaultPrettyPrinter().writeValueAsBytes(report));
        zipEntry(zip, "report.csv", SeoReports.csv(reports));
        for (Map.Entry<String, byte[]> e : sitemapFiles.entrySet()) {
          zipEntry(zip, e.getKey(), e.getValue());
        }
      }
      Artifacts.publish(partial, target);
    } finally {
      Files.deleteIfExists(partial); // gone once published; else this attempt's half file
    }
    reportProgress(1.0, (long) reports.size());

    Map<String, Object> result = new LinkedHashMap<>();
    result.put(RESULT_FILE, artifacts.relative(target));
    result.put("pages", reports.size());
    result.put("site_score", SeoAudit.siteScore(reports));
    result.put("issues", SeoReports.issueCounts(reports));
    result.put("sitemap", urls.base() != null);
    result.put("sitemap_urls", sitemapUrls);
    result.put("links_skipped", files.linksSkipped());
    result.put("pages_too_large", files.tooLarge().size());
    result.put("item_count", reports.size());
    result.put("bytes_in", bytesIn);
    result.put("bytes_out", Files.size(target));
    return result;
  }
}
