package io.asyncjobs.kinds.seo;

import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.jsoup.nodes.Document;
import org.jsoup.nodes.Element;

/**
 * The checks of the {@code seo} kind. A page is first reduced to its {@link PageFacts} (one pass
 * over the parsed document), then all pages are audited together, since duplicate titles and links
 * to other pages' anchors need the whole site.
 */
final class SeoAudit {

  /** Longest title that is not flagged as too long. */
  static final int TITLE_MAX = 60;

  /** Shortest meta description that is not flagged. */
  static final int DESCRIPTION_MIN = 50;

  /** Longest meta description that is not flagged. */
  static final int DESCRIPTION_MAX = 160;

  /**
   * What a page can be flagged for, with the points each finding takes off the page's score of 100,
   * and the most a check can take off in total.
   */
  enum Check {
    TITLE_MISSING("title_missing", 20, 20),
    TITLE_DUPLICATE("title_duplicate", 10, 10),
    TITLE_TOO_LONG("title_too_long", 5, 5),
    DESCRIPTION_MISSING("description_missing", 15, 15),
    DESCRIPTION_LENGTH("description_length", 5, 5),
    H1_MISSING("h1_missing", 10, 10),
    H1_MULTIPLE("h1_multiple", 5, 5),
    IMAGE_WITHOUT_ALT("image_without_alt", 2, 10),
    CANONICAL_MISSING("canonical_missing", 5, 5),
    CANONICAL_ELSEWHERE("canonical_elsewhere", 5, 5),
    NOINDEX("noindex", 0, 0),
    BROKEN_LINK("broken_link", 5, 20),
    BROKEN_ANCHOR("broken_anchor", 3, 15);

    final String code;
    final int penalty;
    final int cap;

    Check(String code, int penalty, int cap) {
      this.code = code;
      this.penalty = penalty;
      this.cap = cap;
    }
  }

  /** One thing found on a page; {@code detail} says which (a link, an image, a length). */
  record Finding(Check check, String detail) {}

  /** What the checks need from one page. */
  record PageFacts(
      String path,
      long size,
      Instant modified,
      String title,
      String description,
      int h1Count,
      List<String> imagesWithoutAlt,
      String canonical,
      boolean noindex,
      Set<String> anchors,
      List<String> links) {}

  /** A page's findings and score, and whether it belongs in the sitemap. */
  record PageReport(PageFacts facts, List<Finding> findings, int score, boolean inSitemap) {

    /** How many findings of {@code check} the page has. */
    int count(Check check) {
      int n = 0;
      for (Finding f : findings) {
        if (f.check() == check) {
          n++;
        }
      }
      return n;
    }
  }

  private SeoAudit() {}

  /** Reduces a parsed page to what the checks need. */
  static PageFacts facts(String path, long size, Instant modified, Document doc) {
    Element titleElement = doc.selectFirst("title");
    String title = titleElement == null ? null : normalize(titleElement.text());
    String description = null;
    for (Element meta : doc.select("meta[name=description]")) {
      description = normalize(meta.attr("content"));
      break;
    }
    List<String> withoutAlt = new ArrayList<>();
    for (Element img : doc.select("img")) {
      if (!img.hasAttr("alt")) {
        withoutAlt.add(img.attr("src"));
      }
    }
    String canonical = null;
    for (Element link : doc.select("link[rel][href]")) {
      if (hasToken(link.attr("rel"), "canonical")) {
        canonical = link.attr("href").strip();
        break;
      }
    }
    boolean noindex = false;
    for (Element meta : doc.select("meta[name=robots], meta[name=googlebot]")) {
      if (hasToken(meta.attr("content").replace(',', ' '), "noindex")
          || hasToken(meta.attr("content").replace(',', ' '), "none")) {
        noindex = true;
      }
    }
    Set<String> anchors = new HashSet<>();
    for (Element e : doc.select("[id]")) {
      anchors.add(e.id());
    }
    for (Element e : doc.select("a[name]")) {
      anchors.add(e.attr("name"));
    }
    List<String> links = new ArrayList<>();
    for (Element a : doc.select("a[href], area[href]")) {
      links.add(a.attr("href"));
    }
    return new PageFacts(
        path,
        size,
        modified,
        title,
        description,
        doc.select("h1").size(),
        withoutAlt,
        canonical,
        noindex,
        anchors,
        links);
  }

  /**
   * Audits every page of a site.
   *
   * @param lookup the existing file a site path names (a folder gives its index page), or null
   * @param unparsed pages that exist but were not parsed (too large): their anchors are not checked
   */
  static List<PageReport> audit(
      List<PageFacts> pages, UnaryOperator<String> lookup, Set<String> unparsed, SiteUrls urls) {
    Map<String, PageFacts> byPath = new HashMap<>();
    Map<String, Integer> titleUses = new HashMap<>();
    for (PageFacts page : pages) {
      byPath.put(page.path(), page);
      if (page.title() != null && !page.title().isEmpty()) {
        titleUses.merge(page.title().toLowerCase(Locale.ROOT), 1, Integer::sum);
      }
    }
    List<PageReport> reports = new ArrayList<>(pages.size());
    for (PageFacts page : pages) {
      List<Finding> findings = new ArrayList<>();
      checkTitle(page, titleUses, findings);
      checkDescription(page, findings);
      if (page.h1Count() == 0) {
        findings.add(new Finding(Check.H1_MISSING, "no <h1>"));
      } else if (page.h1Count() > 1) {
        findings.add(new Finding(Check.H1_MULTIPLE, page.h1Count() + " <h1> elements"));
      }
      for (String src : page.imagesWithoutAlt()) {
        findings.add(new Finding(Check.IMAGE_WITHOUT_ALT, src));
      }
      boolean canonicalElsewhere = checkCanonical(page, lookup, urls, findings);
      if (page.noindex()) {
        findings.add(new Finding(Check.NOINDEX, "meta robots noindex"));
      }
      checkLinks(page, lookup, unparsed, byPath, urls, findings);
      reports.add(
          new PageReport(page, findings, score(findings), !page.noindex() && !canonicalElsewhere));
    }
    return reports;
  }

  /** 100 minus each finding's penalty, each check taking off at most its cap; never below 0. */
  static int score(List<Finding> findings) {
    Map<Check, Integer> taken = new EnumMap<>(Check.class);
    for (Finding f : findings) {
      taken.merge(f.check(), f.check().penalty, Integer::sum);
    }
    int score = 100;
    for (Map.Entry<Check, Integer> e : taken.entrySet()) {
      score -= Math.min(e.getValue(), e.getKey().cap);
    }
    return Math.max(0, score);
  }

  /** The site's score: the mean of the page scores to one decimal, or null without pages. */
  static Double siteScore(List<PageReport> reports) {
    if (reports.isEmpty()) {
      return null;
    }
    double sum = 0;
    for (PageReport r : reports) {
      sum += r.score();
    }
    return Math.round(sum * 10 / reports.size()) / 10.0;
  }

  private static void checkTitle(
      PageFacts page, Map<String, Integer> titleUses, List<Finding> findings) {
    String title = page.title();
    if (title == null || title.isEmpty()) {
      findings.add(new Finding(Check.TITLE_MISSING, title == null ? "no <title>" : "empty"));
      return;
    }
    int uses = titleUses.getOrDefault(title.toLowerCase(Locale.ROOT), 0);
    if (uses > 1) {
      findings.add(new Finding(Check.TITLE_DUPLICATE, "used by " + uses + " pages"));
    }
    int length = title.codePointCount(0, title.length());
    if (length > TITLE_MAX) {
      findings.add(new Finding(Check.TITLE_TOO_LONG, length + " characters"));
    }
  }

  private static void checkDescription(PageFacts page, List<Finding> findings) {
    String description = page.description();
    if (description == null || description.isEmpty()) {
      findings.add(
          new Finding(
              Check.DESCRIPTION_MISSING,
              description == null ? "no meta description" : "empty meta description"));
      return;
    }
    int length = description.codePointCount(0, description.length());
    if (length < DESCRIPTION_MIN || length > DESCRIPTION_MAX) {
      findings.add(new Finding(Check.DESCRIPTION_LENGTH, length + " characters"));
    }
  }

  /**
   * @return whether the canonical URL names another page
   */
  private static boolean checkCanonical(
      PageFacts page, UnaryOperator<String> lookup, SiteUrls urls, List<Finding> findings) {
    if (page.canonical() == null || page.canonical().isEmpty()) {
      findings.add(new Finding(Check.CANONICAL_MISSING, "no <link rel=canonical>"));
      return false;
    }
    SiteUrls.Target target = urls.resolve(page.canonical(), page.path(), true);
    boolean self;
    if (target.where() != SiteUrls.Where.SITE || target.query()) {
      self = false;
    } else if (urls.base() == null && SiteUrls.isRooted(page.canonical())) {
      // Without a base URL the host and the folders the site sits under are unknown: the
      // canonical URL's path must end with the page's own path.
      String full = "/" + target.path();
      self =
          full.endsWith("/" + page.path())
              || full.endsWith("/" + SiteUrls.folderOfIndex(page.path()));
    } else {
      self = page.path().equals(lookup.apply(target.path()));
    }
    if (!self) {
      findings.add(new Finding(Check.CANONICAL_ELSEWHERE, page.canonical()));
    }
    return !self;
  }

  private static void checkLinks(
      PageFacts page,
      UnaryOperator<String> lookup,
      Set<String> unparsed,
      Map<String, PageFacts> byPath,
      SiteUrls urls,
      List<Finding> findings) {
    Set<String> seen = new LinkedHashSet<>();
    for (String href : page.links()) {
      if (!seen.add(href)) {
        continue;
      }
      SiteUrls.Target target = urls.resolve(href, page.path(), false);
      if (target.where() == SiteUrls.Where.MALFORMED) {
        findings.add(new Finding(Check.BROKEN_LINK, href));
        continue;
      }
      if (target.where() != SiteUrls.Where.SITE) {
        continue;
      }
      String file = lookup.apply(target.path());
      if (file == null) {
        findings.add(new Finding(Check.BROKEN_LINK, href));
        continue;
      }
      String fragment = target.fragment();
      if (fragment == null || fragment.isEmpty() || fragment.equalsIgnoreCase("top")) {
        continue;
      }
      PageFacts linked = byPath.get(file);
      if (linked == null || unparsed.contains(file)) {
        continue; // not a parsed page (an image, a PDF, a page too large): no anchors to check
      }
      if (!linked.anchors().contains(fragment)) {
        findings.add(new Finding(Check.BROKEN_ANCHOR, href));
      }
    }
  }

  private static boolean hasToken(String value, String token) {
    for (String part : value.trim().split("\\s+")) {
      if (part.equalsIgnoreCase(token)) {
        return true;
      }
    }
    return false;
  }

  private static String normalize(String text) {
    return text.replaceAll("\\s+", " ").strip();
  }
}
