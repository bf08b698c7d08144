package io.asyncjobs.kinds.seo;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.asyncjobs.api.PayloadCheck;
import io.asyncjobs.engine.JobService;
import io.asyncjobs.files.Artifacts;
import io.asyncjobs.files.FileScope;
import io.asyncjobs.files.FileScopes;
import io.asyncjobs.files.Payloads;
import io.asyncjobs.queue.Job;
import io.asyncjobs.time.Clock;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.jsoup.Jsoup;
import org.jsoup.nodes.Document;

/**
 * What the kinds that read a site ({@code seo}, {@code seo_meta}) share: a payload naming a {@code
 * site} folder inside the caller's scope, a walk that reads and parses its pages one by one, and an
 * artifact folder per job that {@link #cleanup} removes.
 *
 * <p>A subclass is a {@code @Singleton}: it has no constructor without arguments, which a client
 * proxy would need.
 */
public abstract class SiteKind extends JobService implements PayloadCheck {

  private final String kind;
  private final String title;
  private final Set<String> keys;

  /** Resolves the caller's scope recorded in a job. */
  protected final FileScopes scopes;

  /** Where each job's artifact folder is. */
  protected final Artifacts artifacts;

  /** Writes the reports. */
  protected final ObjectMapper json;

  /** Dates the reports. */
  protected final Clock clock;

  /**
   * @param kind this kind's name
   * @param title its title on the admin page
   * @param keys the payload keys a caller may send, {@link SiteFiles#SITE} among them
   */
  protected SiteKind(
      String kind,
      String title,
      Set<String> keys,
      FileScopes scopes,
      Artifacts artifacts,
      ObjectMapper json,
      Clock clock) {
    this.kind = kind;
    this.title = title;
    this.keys = keys;
    this.scopes = scopes;
    this.artifacts = artifacts;
    this.json = json;
    this.clock = clock;
  }

  @Override
  public final String kind() {
    return kind;
  }

  @Override
  public final String title() {
    return title;
  }

  /**
   * Known keys only, a {@code site} folder inside the scope, and what {@link #checkOptions} asks of
   * the other keys.
   */
  @Override
  public final Accepted check(FileScope scope, Map<String, Object> body) {
    Payloads.allowOnly(body, keys);
    SiteFiles.requireSite(scope, body);
    return Accepted.files(body, SiteFiles.preferredName(body, checkOptions(body)));
  }

  /**
   * Checks the payload's keys other than {@code site}.
   *
   * @return the end of the download's file name, after the site's name
   * @throws IllegalArgumentException for a 400 naming the problem
   */
  protected abstract String checkOptions(Map<String, Object> body);

  /** A page of the walk, read and parsed. */
  protected interface PageVisitor {
    /**
     * @param bytes the page's content, or null when it led out of the scope or vanished since the
     *     listing; {@code doc} is then null too
     */
    void visit(SiteFiles.Page page, byte[] bytes, Document doc) throws IOException;
  }

  /** The pages of the site a job names, listed again at run time: they may have changed. */
  protected final SiteFiles scanSite(Job job) throws IOException {
    FileScope scope = scopes.forJob(job);
    return SiteFiles.scan(scope, SiteFiles.requireSite(scope, job.payload));
  }

  /**
   * Reads and parses each page in order, stopping when the thread is interrupted, and reports
   * progress after each page.
   *
   * @param share the share of the progress bar the walk takes; the rest is the kind's own
   * @return the bytes read
   */
  protected final long readPages(SiteFiles files, double share, PageVisitor visitor)
      throws IOException {
    List<SiteFiles.Page> pages = files.pages();
    long bytesIn = 0;
    long parsed = 0;
    int done = 0;
    for (SiteFiles.Page page : pages) {
      if (Thread.currentThread().isInterrupted()) {
        throw new InterruptedIOException("interrupted while reading " + page.path());
      }
      byte[] bytes = files.read(page);
      Document doc = null;
      if (bytes != null) {
        bytesIn += bytes.length;
        parsed++;
        doc = Jsoup.parse(new ByteArrayInputStream(bytes), null, "");
      }
      visitor.visit(page, bytes, doc);
      done++;
      reportProgress(share * done / pages.size(), parsed);
    }
    return bytesIn;
  }

  /** Writes one whole entry of a zip. */
  protected static void zipEntry(ZipOutputStream zip, String name, byte[] content)
      throws IOException {
    zip.putNextEntry(new ZipEntry(name));
    zip.write(content);
    zip.closeEntry();
  }

  @Override
  protected final void cleanup(Job job) throws IOException {
    artifacts.remove(kind, job.uid);
  }
}
