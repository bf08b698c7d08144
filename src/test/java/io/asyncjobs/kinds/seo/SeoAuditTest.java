package io.asyncjobs.kinds.seo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.asyncjobs.kinds.seo.SeoAudit.Check;
import io.asyncjobs.kinds.seo.SeoAudit.Finding;
import io.asyncjobs.kinds.seo.SeoAudit.PageFacts;
import io.asyncjobs.kinds.seo.SeoAudit.PageReport;
import io.asyncjobs.kinds.seo.SiteUrls.Where;
import java.net.URI;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.jsoup.Jsoup;
import org.junit.jupiter.api.Test;

/** The checks, the score and the URL rules, without files or a database. */
class SeoAuditTest {

  static final Instant T = Instant.parse("2024-05-01T09:30:00.123Z");

  static PageFacts page(String path, String html) {
    return SeoAudit.facts(path, html.length(), T, Jsoup.parse(html));
  }

  static PageReport audit(Map<String, String> site, String path) {
    return auditAll(site, null).stream()
        .filter(r -> r.facts().path().equals(path))
        .findFirst()
        .orElseThrow();
  }

  static List<PageReport> auditAll(Map<String, String> site, URI base) {
    List<PageFacts> pages = new ArrayList<>();
    site.forEach((path, html) -> pages.add(page(path, html)));
    UnaryOperator<String> lookup =
        p -> {
          if (!p.isEmpty() && !p.endsWith("/")) {
            return site.containsKey(p)
                ? p
                : site.containsKey(p + "/index.html") ? p + "/index.html" : null;
          }
          return site.containsKey(p + "index.html") ? p + "index.html" : null;
        };
    return SeoAudit.audit(pages, lookup, Set.of(), new SiteUrls(base));
  }

  static final String GOOD_HEAD =
      "<meta name=description content=\"A page that explains one thing well, in a"
          + " sentence of a good length.\">";

  @Test
  void shouldScoreAFlawlessPage100AndTakeEachPenaltyOffAtMostItsCap() {
    String html =
        "<html><head><title>Fine</title>"
            + GOOD_HEAD
            + "<link rel=canonical href=a.html></head><body id=x><h1>Hi</h1>"
            + "<img src=a.png alt=''><a href='#x'>me</a></body></html>";
    PageReport fine = audit(Map.of("a.html", html), "a.html");
    assertThat(fine.findings()).isEmpty();
    assertThat(fine.score()).isEqualTo(100);

    List<Finding> sixImages = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      sixImages.add(new Finding(Check.IMAGE_WITHOUT_ALT, "i" + i));
    }
    // 6 x 2 = 12, capped at 10
    assertThat(SeoAudit.score(sixImages)).isEqualTo(90);
    sixImages.add(new Finding(Check.TITLE_MISSING, ""));
    sixImages.add(new Finding(Check.DESCRIPTION_MISSING, ""));
    sixImages.add(new Finding(Check.NOINDEX, ""));
    assertThat(SeoAudit.score(sixImages)).isEqualTo(100 - 10 - 20 - 15);
  }

  @Test
  void shouldFlagMissingDuplicateAndLongTitlesDescriptionsAndHeadings() {
    String longTitle = "A title that goes on and on well past the sixty characters a result shows";
    Map<String, String> site =
        Map.of(
            "untitled.html", "<html><head></head><body><h1>a</h1><h1>b</h1></body></html>",
            "one.html", "<title>Same  Title</title><meta name=description content=short><p>x",
            "two.html", "<title>same title</title><h1>t</h1>",
            "long.html", "<title>" + longTitle + "</title><h1>t</h1>");

    assertThat(audit(site, "untitled.html").findings())
        .extracting(Finding::check)
        .contains(Check.TITLE_MISSING, Check.DESCRIPTION_MISSING, Check.H1_MULTIPLE)
        .doesNotContain(Check.TITLE_DUPLICATE, Check.H1_MISSING);
    // Duplicates are found on both pages, whatever the case and spacing.
    assertThat(audit(site, "one.html").findings())
        .extracting(Finding::check)
        .contains(Check.TITLE_DUPLICATE, Check.DESCRIPTION_LENGTH, Check.H1_MISSING);
    assertThat(audit(site, "two.html").findings())
        .extracting(Finding::check)
        .contains(Check.TITLE_DUPLICATE);
    assertThat(audit(site, "long.html").findings())
        .contains(new Finding(Check.TITLE_TOO_LONG, longTitle.length() + " characters"));
  }

  @Test
  void shouldFindBrokenLinksAndAnchorsButIgnoreExternalOnes() {
    Map<String, String> site =
        Map.of(
            "index.html",
            "<h1 id=top-of-page>x</h1>"
                + "<a href='blog/'>folder with index</a>"
                + "<a href='blog/post.html#intro'>good anchor</a>"
                + "<a href='blog/post.html#nowhere'>bad anchor</a>"
                + "<a href='#missing-here'>bad local anchor</a>"
                + "<a href='#top'>top always works</a>"
                + "<a href='missing.html'>missing page</a>"
                + "<a href='/blog/post.html?x=1'>root-relative with query</a>"
                + "<a href='../../blog/post.html'>dots stop at the root</a>"
                + "<a href='https://elsewhere.example/'>external</a>"
                + "<a href='mailto:a@b.c'>mail</a>"
                + "<a href='blog/My%20Post.html'>escaped name</a>",
            "blog/index.html",
            "<h1>blog</h1><a href='../index.html#top-of-page'>up</a>",
            "blog/post.html",
            "<h1><a name=intro></a>post</h1>",
            "blog/My Post.html",
            "<h1>spaced</h1>");

    PageReport index = audit(site, "index.html");
    assertThat(index.findings())
        .filteredOn(f -> f.check() == Check.BROKEN_LINK)
        .extracting(Finding::detail)
        .containsExactly("missing.html");
    assertThat(index.findings())
        .filteredOn(f -> f.check() == Check.BROKEN_ANCHOR)
        .extracting(Finding::detail)
        .containsExactly("blog/post.html#nowhere", "#missing-here");
    assertThat(audit(site, "blog/index.html").findings())
        .extracting(Finding::check)
        .doesNotContain(Check.BROKEN_LINK, Check.BROKEN_ANCHOR);
  }

  @Test
  void shouldCheckTheCanonicalAgainstThePagesOwnAddress() {
    URI base = SiteUrls.parseBase("https://WWW.Example.com/docs");
    assertThat(base).hasToString("https://www.example.com/docs/");
    Map<String, String> site =
        Map.of(
            "index.html", "<link rel=canonical href='https://www.example.com/docs/'>",
            "a.html", "<link rel='alternate canonical' href='/docs/a.html'>",
            "b.html", "<link rel=canonical href='https://www.example.com/docs/a.html'>",
            "c.html", "<link rel=canonical href='https://other.example/docs/c.html'>",
            "d.html", "<title>no canonical</title>",
            "e.html",
                "<meta name=robots content='noindex, follow'><link rel=canonical href=e.html>");
    Map<String, PageReport> byPath = new java.util.HashMap<>();
    for (PageReport r : auditAll(site, base)) {
      byPath.put(r.facts().path(), r);
    }
    assertThat(byPath.get("index.html").count(Check.CANONICAL_ELSEWHERE)).isZero();
    assertThat(byPath.get("a.html").count(Check.CANONICAL_ELSEWHERE)).isZero();
    assertThat(byPath.get("b.html").count(Check.CANONICAL_ELSEWHERE)).isOne();
    assertThat(byPath.get("c.html").count(Check.CANONICAL_ELSEWHERE)).isOne();
    assertThat(byPath.get("d.html").count(Check.CANONICAL_MISSING)).isOne();
    assertThat(byPath.get("e.html").count(Check.NOINDEX)).isOne();
    // The sitemap lists only pages that are indexable as themselves.
    assertThat(byPath.values())
        .filteredOn(PageReport::inSitemap)
        .extracting(r -> r.facts().path())
        .containsExactlyInAnyOrder("index.html", "a.html", "d.html");

    // Without a base URL an absolute canonical is compared by its path from the host's root.
    PageReport noBase =
        auditAll(
                Map.of("x/a.html", "<link rel=canonical href='https://any.example/x/a.html'>"),
                null)
            .get(0);
    assertThat(noBase.count(Check.CANONICAL_ELSEWHERE)).isZero();
  }

  @Test
  void shouldResolveLinksLikeABrowserWithinTheBaseFolder() {
    SiteUrls urls = new SiteUrls(SiteUrls.parseBase("https://example.com/docs/"));
    assertThat(urls.resolve("../x.html", "a.html", false).where()).isEqualTo(Where.OUTSIDE);
    assertThat(urls.resolve("/docs/x.html#a%20b", "a/b.html", false))
        .isEqualTo(new SiteUrls.Target(Where.SITE, "x.html", "a b", false));
    assertThat(urls.resolve("https://EXAMPLE.com/docs/y/", "a.html", false).path()).isEqualTo("y/");
    assertThat(urls.resolve("//cdn.example/x.js", "a.html", false).where())
        .isEqualTo(Where.EXTERNAL);
    assertThat(urls.resolve("javascript:void(0)", "a.html", false).where())
        .isEqualTo(Where.EXTERNAL);
    assertThat(urls.resolve("http://[bad", "a.html", false).where()).isEqualTo(Where.MALFORMED);
    assertThat(urls.urlOf("blog/index.html")).isEqualTo("https://example.com/docs/blog/");
    assertThat(urls.urlOf("index.html")).isEqualTo("https://example.com/docs/");
    assertThat(urls.urlOf("a b/ü&.html"))
        .isEqualTo("https://example.com/docs/a%20b/%C3%BC%26.html");

    for (String bad :
        List.of(
            "example.com",
            "ftp://example.com/",
            "https://user:pw@example.com/",
            "/relative",
            "https://example.com/?q=1",
            "https://example.com/#top",
            "http://exa mple.com/")) {
      assertThatThrownBy(() -> SiteUrls.parseBase(bad))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("base_url");
    }
  }

  @Test
  void shouldQuoteCsvFieldsThatNeedIt() {
    assertThat(SeoReports.csvField("plain")).isEqualTo("plain");
    // A title a spreadsheet would run as a formula is neutralised.
    assertThat(SeoReports.csvField("=HYPERLINK(\"x\")")).isEqualTo("\"'=HYPERLINK(\"\"x\"\")\"");
    assertThat(SeoReports.csvField("@SUM(A1)")).isEqualTo("'@SUM(A1)");
    assertThat(SeoReports.csvField("a,b")).isEqualTo("\"a,b\"");
    assertThat(SeoReports.csvField("say \"hi\"")).isEqualTo("\"say \"\"hi\"\"\"");
    assertThat(SeoReports.csvField("two\nlines")).isEqualTo("\"two\nlines\"");
    assertThat(SeoReports.w3cDate(T)).isEqualTo("2024-05-01T09:30:00Z");
  }
}
