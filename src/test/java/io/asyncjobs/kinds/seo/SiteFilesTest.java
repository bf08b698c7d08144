package io.asyncjobs.kinds.seo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.asyncjobs.files.FileScope;
import io.asyncjobs.queue.Owner;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How the site walk lists pages: each real file once, under its own name, up to a limit. */
class SiteFilesTest {

  @TempDir Path root;
  FileScope scope;
  Path site;

  @BeforeEach
  void site() throws Exception {
    scope = FileScope.ofOwner(root, new Owner("user", "o"));
    site = Files.createDirectories(scope.ensureBase().resolve("www"));
  }

  void page(String path) throws Exception {
    SeoFixtures.write(site, path, "<title>" + path + "</title>");
  }

  @Test
  void shouldFailNamingTheLimitWhenTheSiteHasMorePagesThanOneJobLists() throws Exception {
    for (String path : new String[] {"a.html", "b.htm", "c/d.html", "e/f.html"}) {
      page(path);
    }
    Files.writeString(site.resolve("c/style.css"), "not a page");

    assertThat(SiteFiles.scan(scope, site, 4).pages()).hasSize(4);
    assertThatThrownBy(() -> SiteFiles.scan(scope, site, 3))
        .isInstanceOf(SiteFiles.TooManyPagesException.class)
        .hasMessageContaining("more than 3 pages");
    assertThat(SiteFiles.MAX_PAGES).isEqualTo(100_000);
  }

  @Test
  void shouldListARealPageUnderItsOwnPathAndStillResolveTheLinksToIt() throws Exception {
    page("zz/index.html");
    page("zz/deep/page.html");
    // The links sort before the real names; the real names are listed all the same.
    Files.createSymbolicLink(site.resolve("aa"), Path.of("zz"));
    Files.createSymbolicLink(site.resolve("a.html"), Path.of("zz/deep/page.html"));
    Files.createSymbolicLink(site.resolve("zz/deep/up"), Path.of(".."));

    SiteFiles files = SiteFiles.scan(scope, site);

    assertThat(files.pages())
        .extracting(SiteFiles.Page::path)
        .containsExactly("zz/deep/page.html", "zz/index.html");
    assertThat(files.linksSkipped()).isEqualTo(3);
    assertThat(files.lookup("aa/")).isEqualTo("zz/index.html");
    assertThat(files.lookup("aa")).isEqualTo("zz/index.html");
    assertThat(files.lookup("aa/deep/up/deep/page.html")).isEqualTo("zz/deep/page.html");
    assertThat(files.lookup("a.html")).isEqualTo("a.html");
    assertThat(files.lookup("aa/missing.html")).isNull();
  }
}
