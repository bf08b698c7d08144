package io.asyncjobs.kinds.seometa;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.asyncjobs.files.Artifacts;
import io.asyncjobs.files.FileScopes;
import io.asyncjobs.files.Payloads;
import io.asyncjobs.files.ZipEntryNames;
import io.asyncjobs.kinds.seo.SiteFiles;
import io.asyncjobs.kinds.seo.SiteKind;
import io.asyncjobs.queue.Job;
import io.asyncjobs.time.Clock;
import jakarta.inject.Singleton;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.ZipOutputStream;
import org.jsoup.nodes.Document;

/**
 * The {@code seo_meta} kind: proposes for every HTML page of a folder in the caller's scope a title
 * (at most 60 characters), a meta description (at most 155) and the matching {@code og:title} and
 * {@code og:description}, derived from the page's title, headings and first paragraphs. Leaves
 * {@code meta.json}; with {@code write_copies} a zip of {@code meta.json} and patched copies of the
 * pages instead. The pages themselves are only read, never written.
 */
@Singleton
public class SeoMetaService extends SiteKind {

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

  SeoMetaService(FileScopes scopes, Artifacts artifacts, ObjectMapper json, Clock clock) {
    super(KIND, "SEO meta tags", KEYS, scopes, artifacts, json, clock);
  }

  @Override
  public RouteDoc routeDoc() {
    return new RouteDoc(
        "Enqueue meta tag proposals",
        """
        Proposes for every .html/.htm page under site (a folder relative to your own folder) \
        a title (at most 60 characters), a meta description (at most 155), og:title and \
        og:description. The result is meta.json; with write_copies a zip of meta.json and \
        patched copies. The pages themselves are never changed.""",
        "with patched copies",
        "{\"site\": \"www\", \"write_copies\": true}",
        """
        {"type": "object", "required": ["site"], "additionalProperties": false,
         "properties": {
           "site": {"type": "string", "minLength": 1, "maxLength": %d, "pattern": "%s",
                    "description": "a folder of your tree holding the pages"},
           "write_copies": {"type": "boolean",
                            "description": "also zip patched copies of the pages"}}}"""
            .formatted(SiteFiles.MAX_SITE_LENGTH, Payloads.NOT_BLANK),
        Map.of());
  }

  /** {@code write_copies} a boolean when given. */
  @Override
  protected String checkOptions(Map<String, Object> body) {
    return Payloads.optionalBoolean(body, WRITE_COPIES, false) ? "-meta.zip" : "-meta.json";
  }

  @Override
  protected Map<String, Object> process(Job job) throws Exception {
    boolean copies = Payloads.optionalBoolean(job.payload, WRITE_COPIES, false);
    SiteFiles files = scanSite(job);

    Path folder = artifacts.folder(KIND, job.uid);
    Path target = folder.resolve(copies ? META_ZIP : META_JSON);
    Path partial = Artifacts.partial(target);
    List<Map<String, Object>> entries = new ArrayList<>(files.pages().size());
    Changes changes = new Changes();
    long bytesIn;
    try {
      try (OutputStream file = new BufferedOutputStream(Files.newOutputStream(partial), 1 << 16);
          ZipOutputStream zip = copies ? new ZipOutputStream(file) : null) {
        bytesIn =
            readPages(
                files,
                0.95,
                (page, bytes, doc) -> {
                  if (doc != null) {
                    entries.add(propose(page.path(), doc, zip, changes));
                  }
                });
        byte[] meta =
            json.writerWithDefaultPrettyPrinter()
                .writeValueAsBytes(metaJson(job, files, entries, copies));
        if (zip != null) {
          zipEntry(zip, META_JSON, meta);
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
    result.put("titles_changed", changes.titles);
    result.put("descriptions_changed", changes.descriptions);
    result.put("copies", copies);
    result.put("links_skipped", files.linksSkipped());
    result.put("pages_too_large", files.tooLarge().size());
    result.put("item_count", entries.size());
    result.put("bytes_in", bytesIn);
    result.put("bytes_out", Files.size(target));
    return result;
  }

  /** How many proposals differ from what the pages have. */
  private static final class Changes {
    int titles;
    int descriptions;
  }

  /**
   * Derives one page's proposal, counts what it changes and, with a zip, writes the patched copy.
   *
   * @return the page's entry in {@code meta.json}
   */
  private static Map<String, Object> propose(
      String path, Document doc, ZipOutputStream zip, Changes changes) throws IOException {
    MetaDeriver.Proposal proposal = MetaDeriver.derive(doc, path);
    if (proposal.title() != null && !proposal.title().equals(proposal.currentTitle())) {
      changes.titles++;
    }
    if (proposal.description() != null
        && !proposal.description().equals(proposal.currentDescription())) {
      changes.descriptions++;
    }
    String copy = null;
    if (zip != null) {
      MetaDeriver.patch(doc, proposal);
      doc.outputSettings().prettyPrint(false);
      // The page's own name may hold a backslash; its copy's entry must not (see ZipEntryNames).
      copy = COPIES_FOLDER + ZipEntryNames.of(path);
      zipEntry(zip, copy, doc.outerHtml().getBytes(doc.charset()));
    }
    return entry(path, proposal, copy);
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
}
