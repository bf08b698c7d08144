package io.asyncjobs.operations;

import io.asyncjobs.auth.DownloadLinks;
import io.asyncjobs.engine.ServiceManager;
import io.asyncjobs.problem.ProblemException;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobPage;
import io.asyncjobs.queue.JobReads;
import io.asyncjobs.queue.JobStatus;
import io.asyncjobs.queue.Owner;
import io.quarkus.runtime.annotations.RegisterForReflection;
import jakarta.enterprise.context.ApplicationScoped;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;

/** Pages of jobs for the caller's list and the admin's list: filters checked, next link made. */
@ApplicationScoped
public class JobLists {

  /** Page size of a list without {@code limit}. */
  static final int DEFAULT_PAGE = 50;

  private final JobReads reads;
  private final DownloadLinks links;
  private final ServiceManager services;

  JobLists(JobReads reads, DownloadLinks links, ServiceManager services) {
    this.reads = reads;
    this.links = links;
    this.services = services;
  }

  /** One job as its status route shows it: with a signed download link when it has a file. */
  public JobView view(Job job) {
    return JobView.of(job, links);
  }

  /**
   * A list request's filters, checked as every list route checks them; each failure is the 400 a
   * caller sees. The admin CLI checks its own filters here too.
   *
   * @param kind a registered kind, or null or empty for any
   * @param status a status, or null or empty for any
   * @param owner the owner whose jobs to list, or null for any
   * @param before the uid the page starts after (newest first), or null or empty for the first page
   * @param limit the page size, or null or empty for the default
   */
  public Filters filters(String kind, String status, Owner owner, String before, String limit) {
    return new Filters(
        kindFilter(kind),
        Requests.status(status),
        owner,
        before == null || before.isEmpty() ? null : Requests.uid(before, "before"),
        Requests.limit(limit, DEFAULT_PAGE));
  }

  /**
   * Checked filters of a list request, ready for {@link JobReads#listJobs}.
   *
   * @param kind only this kind, or null
   * @param status only this status, or null
   * @param owner only this owner's jobs, or null
   * @param before only jobs older than this uid, or null
   * @param limit the page size
   */
  @RegisterForReflection(registerFullHierarchy = true)
  public record Filters(String kind, JobStatus status, Owner owner, UUID before, int limit) {}

  /** One page of jobs; {@code path} is the route the next page's link points at. */
  public JobListView page(
      String path, String kind, String status, Owner owner, String before, String limit) {
    Filters filters = filters(kind, status, owner, before, limit);
    String kindFilter = filters.kind();
    JobStatus statusFilter = filters.status();
    int size = filters.limit();
    JobPage page = reads.listJobs(kindFilter, statusFilter, owner, filters.before(), size);
    List<JobView> views = page.jobs().stream().map(job -> JobView.of(job, links)).toList();
    String nextUrl = null;
    if (page.next() != null) {
      StringBuilder url = new StringBuilder(path).append("?before=").append(page.next());
      url.append("&limit=").append(size);
      if (kindFilter != null) {
        url.append("&kind=").append(kindFilter);
      }
      if (statusFilter != null) {
        url.append("&status=").append(statusFilter.dbValue());
      }
      if (owner != null && path.startsWith("/api/admin")) {
        url.append("&owner_kind=").append(encode(owner.kind()));
        url.append("&owner_id=").append(encode(owner.id()));
      }
      nextUrl = url.toString();
    }
    return new JobListView(views, page.next(), nextUrl);
  }

  private String kindFilter(String kind) {
    if (kind == null || kind.isEmpty()) {
      return null;
    }
    if (services.jobService(kind).isEmpty()) {
      throw ProblemException.badRequest(
          "kind must be one of "
              + String.join(", ", services.kinds())
              + "; got "
              + Requests.quote(kind));
    }
    return kind;
  }

  private static String encode(String text) {
    return URLEncoder.encode(text, StandardCharsets.UTF_8);
  }
}
