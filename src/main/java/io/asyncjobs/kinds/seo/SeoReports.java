package io.asyncjobs.kinds.seo;

import io.asyncjobs.kinds.seo.SeoAudit.Check;
import io.asyncjobs.kinds.seo.SeoAudit.Finding;
import io.asyncjobs.kinds.seo.SeoAudit.PageReport;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.xml.stream.XMLOutputFactory;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamWriter;

/** Turns the audit into the three files of the {@code seo} zip. */
final class SeoReports {

  /** The sitemaps.org 0.9 namespace. */
  static final String SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9";

  /** Most URLs one sitemap file may list (sitemaps.org). */
  static final int SITEMAP_MAX_URLS = 50_000;

  /** Longest URL a sitemap may list (sitemaps.org); longer ones are left out. */
  static final int SITEMAP_MAX_URL_LENGTH = 2048;

  private SeoReports() {}

  /** Issue counts by check code, every check present, in the order of {@link Check}. */
  static Map<String, Integer> issueCounts(List<PageReport> reports) {
    Map<String, Integer> counts = new LinkedHashMap<>();
    for (Check check : Check.values()) {
      counts.put(check.code, 0);
    }
    for (PageReport report : reports) {
      for (Finding f : report.findings()) {
        counts.merge(f.check().code, 1, Integer::sum);
      }
    }
    return counts;
  }

  /** The content of {@code report.json}, as a map for Jackson. */
  static Map<String, Object> json(
      String site,
      SiteUrls urls,
      List<PageReport> reports,
      SiteFiles files,
      Map<String, Object> sitemap,
      Instant generatedAt) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("site", site);
    out.put("base_url", urls.base() == null ? null : urls.base().toString());
    out.put("generated_at", generatedAt.toString());
    out.put("page_count", reports.size());
    out.put("site_score", SeoAudit.siteScore(reports));
    out.put("issues", issueCounts(reports));
    Map<String, Object> scoring = new LinkedHashMap<>();
    for (Check check : Check.values()) {
      scoring.put(check.code, Map.of("penalty", check.penalty, "max", check.cap));
    }
    out.put("scoring", scoring);
    out.put("sitemap", sitemap);
    out.put("links_skipped", files.linksSkipped());
    out.put("pages_too_large", files.tooLarge());
    List<Map<String, Object>> pages = new ArrayList<>(reports.size());
    for (PageReport report : reports) {
      SeoAudit.PageFacts facts = report.facts();
      Map<String, Object> page = new LinkedHashMap<>();
      page.put("path", facts.path());
      page.put("score", report.score());
      page.put("title", facts.title());
      page.put("description", facts.description());
      page.put("h1_count", facts.h1Count());
      page.put("canonical", facts.canonical());
      page.put("noindex", facts.noindex());
      page.put("in_sitemap", urls.base() != null && report.inSitemap());
      List<Map<String, Object>> findings = new ArrayList<>();
      for (Finding f : report.findings()) {
        Map<String, Object> finding = new LinkedHashMap<>();
        finding.put("check", f.check().code);
        finding.put("detail", f.detail());
        findings.add(finding);
      }
      page.put("findings", findings);
      pages.add(page);
    }
    out.put("pages", pages);
    return out;
  }

  /**
   * The content of {@code report.csv}: a header and one row per page (RFC 4180: comma-separated,
   * CRLF line ends, fields quoted when they hold a comma, quote or line break).
   */
  static byte[] csv(List<PageReport> reports) {
    StringBuilder out = new StringBuilder();
    List<String> header = new ArrayList<>(List.of("path", "score", "issues", "title"));
    for (Check check : Check.values()) {
      header.add(check.code);
    }
    row(out, header);
    for (PageReport report : reports) {
      List<String> cells = new ArrayList<>();
      cells.add(report.facts().path());
      cells.add(Integer.toString(report.score()));
      cells.add(Integer.toString(report.findings().size() - report.count(Check.NOINDEX)));
      cells.add(report.facts().title() == null ? "" : report.facts().title());
      for (Check check : Check.values()) {
        cells.add(Integer.toString(report.count(check)));
      }
      row(out, cells);
    }
    return out.toString().getBytes(StandardCharsets.UTF_8);
  }

  private static void row(StringBuilder out, List<String> cells) {
    for (int i = 0; i < cells.size(); i++) {
      if (i > 0) {
        out.append(',');
      }
      out.append(csvField(cells.get(i)));
    }
    out.append("\r\n");
  }

  /**
   * One CSV field, quoted (inner quotes doubled) when it holds a comma, quote or line break. A
   * field a spreadsheet would run as a formula (starting with =, +, -, @, a tab or a carriage
   * return; page titles are written by whoever wrote the site) gets a leading apostrophe.
   */
  static String csvField(String value) {
    if (!value.isEmpty() && "=+-@\t\r".indexOf(value.charAt(0)) >= 0) {
      value = "'" + value;
    }
    if (value.indexOf(',') < 0
        && value.indexOf('"') < 0
        && value.indexOf('\n') < 0
        && value.indexOf('\r') < 0) {
      return value;
    }
    return '"' + value.replace("\"", "\"\"") + '"';
  }

  /** One URL of the sitemap. */
  record SitemapUrl(String loc, Instant lastmod) {}

  /**
   * The URLs the sitemap lists: every page in the sitemap (not noindex, canonical to itself), by
   * its absolute URL; URLs over {@link #SITEMAP_MAX_URL_LENGTH} characters are left out.
   */
  static List<SitemapUrl> sitemapUrls(List<PageReport> reports, SiteUrls urls) {
    List<SitemapUrl> out = new ArrayList<>();
    for (PageReport report : reports) {
      if (!report.inSitemap()) {
        continue;
      }
      String loc = urls.urlOf(report.facts().path());
      if (loc.length() <= SITEMAP_MAX_URL_LENGTH) {
        out.add(new SitemapUrl(loc, report.facts().modified()));
      }
    }
    return out;
  }

  /** A {@code <urlset>} document listing {@code urls}. */
  static byte[] urlset(List<SitemapUrl> urls) throws XMLStreamException {
    return sitemapDocument("urlset", "url", urls);
  }

  /** A {@code <sitemapindex>} document naming {@code locs}. */
  static byte[] sitemapIndex(List<String> locs, Instant lastmod) throws XMLStreamException {
    return sitemapDocument(
        "sitemapindex", "sitemap", locs.stream().map(loc -> new SitemapUrl(loc, lastmod)).toList());
  }

  /** The two sitemap documents differ only in their element names. */
  private static byte[] sitemapDocument(String root, String entry, List<SitemapUrl> entries)
      throws XMLStreamException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    XMLStreamWriter xml = xmlWriter(bytes);
    xml.writeStartDocument("UTF-8", "1.0");
    xml.writeCharacters("\n");
    xml.writeStartElement(root);
    xml.writeDefaultNamespace(SITEMAP_NS);
    for (SitemapUrl url : entries) {
      xml.writeCharacters("\n  ");
      xml.writeStartElement(entry);
      element(xml, "loc", url.loc());
      element(xml, "lastmod", w3cDate(url.lastmod()));
      xml.writeEndElement();
    }
    xml.writeCharacters("\n");
    xml.writeEndElement();
    xml.writeCharacters("\n");
    xml.writeEndDocument();
    xml.close();
    return bytes.toByteArray();
  }

  /**
   * A UTF-8 writer from the JDK's own StAX implementation. {@code newFactory()} would look one up
   * (system property, ServiceLoader, then reflection), which a native executable only answers for
   * registered classes; this gives the same writer on the JVM without the look-up.
   */
  private static XMLStreamWriter xmlWriter(ByteArrayOutputStream bytes) throws XMLStreamException {
    return XMLOutputFactory.newDefaultFactory().createXMLStreamWriter(bytes, "UTF-8");
  }

  private static void element(XMLStreamWriter xml, String name, String text)
      throws XMLStreamException {
    xml.writeStartElement(name);
    xml.writeCharacters(text);
    xml.writeEndElement();
  }

  /** A W3C datetime in UTC to the second, for example {@code 2024-05-01T09:30:00Z}. */
  static String w3cDate(Instant instant) {
    return DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(
        instant.truncatedTo(ChronoUnit.SECONDS).atOffset(ZoneOffset.UTC));
  }
}
