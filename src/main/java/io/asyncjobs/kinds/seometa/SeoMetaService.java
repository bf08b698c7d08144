package io.asyncjobs.kinds.seometa;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.asyncjobs.api.PayloadCheck;
import io.asyncjobs.engine.JobService;
import io.asyncjobs.files.Artifacts;
import io.asyncjobs.files.FileScope;
import io.asyncjobs.files.FileScopes;
import io.asyncjobs.files.Payloads;
import io.asyncjobs.kinds.seo.SiteFiles;
import io.asyncjobs.queue.Job;
import io.asyncjobs.time.Clock;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.BufferedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.jsoup.Jsoup;
import org.jsoup.nodes.Document;

/**
 * The {@code seo_meta} kind: proposes for every HTML page of a folder in the caller's scope a title
 * (at most 60 characters), a meta description (at most 155) and the matching {@code og:title} and
 * {@code og:description}, derived from the page's title, headings and first paragraphs. Leaves
 * {@code meta.json}; with {@code write_copies} a zip of {@code meta.json} and patched copies of the
 * pages instead. The pages themselves are only read, never written.
 */
@ApplicationScoped
public class SeoMetaService extends JobService implements PayloadCheck {

  /** This kind's name. */
  public static final String KIND = "seo_meta";

  /** The payload key asking for patched copies. */
  public static final String WRITE_COPIES = "write_copies";

  /** The payload keys a caller may send. */
  static final Set<String> KEYS = Set.of(SiteFiles.SITE, WRITE_COPIES);

  /** The artifact without copies. */
  static final String META_JSON = "meta.json";

  /** The artifact with copies. */
  static final String META_ZIP = "meta.zip";

  /** The folder of the zip holding the patched copies. */
  static final String COPIES_FOLDER = "pages/";

  private final FileScopes scopes;
  private final Artifacts artifacts;
  private final ObjectMapper json;
  private final Clock clock;

  SeoMetaService(FileScopes scopes, Artifacts artifacts, ObjectMapper json, Clock clock) {
    this.scopes = scopes;
    this.artifacts = artifacts;
    this.json = json;
    this.clock = clock;
  }

  @Override
  public String kind() {
    return KIND;
  }

  @Override
  public String title() {
    return "SEO meta tags";
  }

  @Override
  public RouteDoc routeDoc() {
    return new RouteDoc(
        "Enqueue meta tag proposals",
        "Proposes for every .html/.htm page under site (a folder relative to your own folder)"
            + " a title (at most 60 characters), a meta description (at most 155), og:title"
            + " and og:description. The result is meta.json; with write_copies a zip of"
            + " meta.json and patched copies. The pages themselves are never changed.",
        "with patched copies",
        "{\"site\": \"www\", \"write_copies\": true}",
        Map.of());
  }

  /**
   * Known keys only, a {@code site} folder inside the scope, and {@code write_copies} a boolean
   * when given.
   */
  @Override
  public Accepted check(FileScope scope, Map<String, Object> body) {
    Payloads.allowOnly(body, KEYS);
    SiteFiles.requireSite(scope, body);
    boolean copies = Payloads.optionalBoolean(body, WRITE_COPIES, false);
    return Accepted.files(body, SiteFiles.preferredName(body, copies ? "-meta.zip" : "-meta.json"));
  }

  @Override
  protected Map<String, Object> process(Job job) throws Exception {
    FileScope scope = scopes.forJob(job);
    Path site = SiteFiles.requireSite(scope, job.payload);
    boolean copies = Payloads.optionalBoolean(job.payload, WRITE_COPIES, false);
    SiteFiles files = SiteFiles.scan(scope, site);
    List<SiteFiles.Page> pages = files.pages();

    Path folder = artifacts.folder(KIND, job.uid);
    Path target = folder.resolve(copies ? META_ZIP : META_JSON);
    Path partial = Artifacts.partial(target);
    List<Map<String, Object>> entries = new ArrayList<>(pages.size());
    long bytesIn = 0;
    int titlesChanged = 0;
    int descriptionsChanged = 0;
    int done = 0;
    try {
      try (OutputStream file = new BufferedOutputStream(Files.newOutputStream(partial), 1 << 16);
          ZipOutputStream zip = copies ? new ZipOutputStream(file) : null) {
        for (SiteFiles.Page page : pages) {
          if (Thread.currentThread().isInterrupted()) {
            throw new InterruptedIOException("interrupted while reading " + page.path());
          }
          byte[] bytes = files.read(page);
          done++;
          if (bytes == null) {
            continue; // led out of the scope or vanished since the listing
          }
          bytesIn += bytes.length;
          Document doc = Jsoup.parse(new ByteArrayInputStream(bytes), null, "");
          MetaDeriver.Proposal proposal = MetaDeriver.derive(doc, page.path());
          if (proposal.title() != null && !proposal.title().equals(proposal.currentTitle())) {
            titlesChanged++;
          }
          if (proposal.description() != null
              && !proposal.description().equals(proposal.currentDescription())) {
            descriptionsChanged++;
          }
          String copy = null;
          if (zip != null) {
            MetaDeriver.patch(doc, proposal);
            doc.outputSettings().prettyPrint(false);
            copy = COPIES_FOLDER + page.path();
            zip.putNextEntry(new ZipEntry(copy));
            zip.write(doc.outerHtml().getBytes(doc.charset()));
            zip.closeEntry();
          }
          entries.add(entry(page.path(), proposal, copy));
          reportProgress(0.95 * done / pages.size(), (long) entries.size());
        }
        byte[] meta =
            json.writerWithDefaultPrettyPrinter()
                .writeValueAsBytes(metaJson(job, files, entries, copies));
        if (zip != null) {
          zip.putNextEntry(new ZipEntry(META_JSON));
          zip.write(meta);
          zip.closeEntry();
        } else {
          file.write(meta);
        }
      }
      Artifacts.publish(partial, target);
    } finally {
      Files.deleteIfExists(partial); // gone once published; else this attempt's half file
    }
    reportProgress(1.0, (long) entries.size());

    Map<String, Object> result = new LinkedHashMap<>();
    result.put(RESULT_FILE, artifacts.relative(target));
    result.put("pages", entries.size());
    result.put("titles_changed", titlesChanged);
    result.put("descriptions_changed", descriptionsChanged);
    result.put("copies", copies);
    result.put("links_skipped", files.linksSkipped());
    result.put("pages_too_large", files.tooLarge().size());
    result.put("item_count", entries.size());
    result.put("bytes_in", bytesIn);
    result.put("bytes_out", Files.size(target));
    return result;
  }

  private Map<String, Object> metaJson(
      Job job, SiteFiles files, List<Map<String, Object>> entries, boolean copies) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("site", job.payload.get(SiteFiles.SITE));
    out.put("generated_at", clock.now().toString());
    out.put("title_max", MetaDeriver.TITLE_MAX);
    out.put("description_max", MetaDeriver.DESCRIPTION_MAX);
    out.put("copies", copies ? COPIES_FOLDER : null);
    out.put("links_skipped", files.linksSkipped());
    out.put("pages_too_large", files.tooLarge());
    out.put("pages", entries);
    return out;
  }

  private static Map<String, Object> entry(
      String path, MetaDeriver.Proposal proposal, String copy) {
    Map<String, Object> current = new LinkedHashMap<>();
    current.put("title", proposal.currentTitle());
    current.put("description", proposal.currentDescription());
    current.put("og_title", proposal.currentOgTitle());
    current.put("og_description", proposal.currentOgDescription());
    Map<String, Object> proposed = new LinkedHashMap<>();
    proposed.put("title", proposal.title());
    proposed.put("description", proposal.description());
    proposed.put("og_title", proposal.title());
    proposed.put("og_description", proposal.description());
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("path", path);
    out.put("current", current);
    out.put("proposed", proposed);
    out.put("title_source", proposal.titleSource());
    out.put("description_source", proposal.descriptionSource());
    out.put("copy", copy);
    return out;
  }

  @Override
  protected void cleanup(Job job) throws IOException {
    artifacts.remove(KIND, job.uid);
  }
}
