package io.asyncjobs.operations;

import io.asyncjobs.engine.ServiceManager;
import io.asyncjobs.problem.ProblemException;
import io.asyncjobs.queue.JobBulk;
import io.asyncjobs.queue.JobStatus;
import io.asyncjobs.queue.Owner;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.jboss.logging.Logger;

/**
 * Bulk cancel and retry, with the refusals a caller sees: the admin routes and the admin CLI both
 * go through here, so a filter is checked the same way whichever asked.
 */
@ApplicationScoped
public class BulkActions {

  private static final Logger LOG = Logger.getLogger(BulkActions.class);

  private static final List<JobStatus> CANCELLABLE = List.of(JobStatus.PENDING, JobStatus.RUNNING);
  private static final List<JobStatus> RETRYABLE = List.of(JobStatus.FAILED);

  private final ServiceManager services;
  private final JobBulk bulk;

  BulkActions(ServiceManager services, JobBulk bulk) {
    this.services = services;
    this.bulk = bulk;
  }

  /**
   * Cancels every pending or running job the request matches (or counts them, in a dry run).
   *
   * @throws ProblemException 400 for a filter a caller must fix
   */
  public BulkResult cancel(BulkRequest request) {
    JobBulk.Filter filter = filter(request, CANCELLABLE, "a cancel");
    return run("cancel", request, filter);
  }

  /**
   * Retries every failed job the request matches (or counts them, in a dry run).
   *
   * @throws ProblemException 400 for a filter a caller must fix
   */
  public BulkResult retry(BulkRequest request) {
    JobBulk.Filter filter = filter(request, RETRYABLE, "a retry");
    return run("retry", request, filter);
  }

  private BulkResult run(String action, BulkRequest request, JobBulk.Filter filter) {
    boolean dryRun = Boolean.TRUE.equals(request.dryRun());
    JobBulk.Outcome outcome =
        dryRun
            ? bulk.count(filter)
            : "cancel".equals(action) ? bulk.cancel(filter) : bulk.retry(filter);
    if (!dryRun) {
      LOG.infof(
          "bulk %s: %d matched, %d affected in %d batch(es); filter %s",
          action, outcome.matched(), outcome.affected(), outcome.batches(), request);
    }
    return new BulkResult(outcome.matched(), outcome.affected(), dryRun, outcome.batches());
  }

  /** The request as a filter of the kinds and statuses to walk; 400 for what a caller must fix. */
  private JobBulk.Filter filter(BulkRequest r, List<JobStatus> allowed, String action) {
    if (r == null) {
      throw noFilter();
    }
    List<String> kinds;
    if (blank(r.kind())) {
      kinds = knownKinds();
    } else if (services.kinds().contains(r.kind()) || knownKinds().contains(r.kind())) {
      kinds = List.of(r.kind());
    } else {
      throw ProblemException.badRequest(
          "kind must be one of "
              + String.join(", ", knownKinds())
              + "; got "
              + Requests.quote(r.kind()));
    }
    List<JobStatus> statuses = allowed;
    if (!blank(r.status())) {
      JobStatus status = JobStatus.fromDbValue(r.status()).orElse(null);
      if (status == null || !allowed.contains(status)) {
        throw ProblemException.badRequest(
            "status for "
                + action
                + " must be "
                + String.join(" or ", allowed.stream().map(JobStatus::dbValue).toList())
                + "; got "
                + Requests.quote(r.status()));
      }
      statuses = List.of(status);
    }
    Owner owner = null;
    if (r.ownerKind() != null || r.ownerId() != null) {
      if (blank(r.ownerKind()) || blank(r.ownerId())) {
        throw ProblemException.badRequest("owner_kind and owner_id filter together: give both");
      }
      owner = new Owner(r.ownerKind(), r.ownerId());
    }
    Instant before = time(r.createdBefore(), "created_before");
    Instant after = time(r.createdAfter(), "created_after");
    if (before != null && after != null && !after.isBefore(before)) {
      throw ProblemException.badRequest(
          "created_after must be before created_before, or no job could match");
    }
    boolean filtered =
        !blank(r.kind()) || !blank(r.status()) || owner != null || before != null || after != null;
    if (!filtered && !Boolean.TRUE.equals(r.all())) {
      throw noFilter();
    }
    return new JobBulk.Filter(kinds, statuses, owner, before, after);
  }

  /**
   * The kinds a bulk action may walk: those registered on this replica, and those the table holds
   * jobs of, which another replica may run (a kind disabled here) or none (a retired one).
   */
  private List<String> knownKinds() {
    Set<String> kinds = new TreeSet<>(services.kinds());
    kinds.addAll(bulk.kindsPresent());
    return List.copyOf(kinds);
  }

  private static ProblemException noFilter() {
    return ProblemException.badRequest(
        "give at least one filter (kind, status, owner_kind and owner_id, created_before,"
            + " created_after), or \"all\": true to act on every job");
  }

  private static Instant time(String text, String name) {
    if (text == null) {
      return null;
    }
    try {
      return OffsetDateTime.parse(text.trim()).toInstant();
    } catch (DateTimeParseException e) {
      throw ProblemException.badRequest(
          name
              + " must be an RFC 3339 time with an offset, such as 2026-05-01T08:00:00Z; got "
              + Requests.quote(text));
    }
  }

  private static boolean blank(String text) {
    return text == null || text.isEmpty();
  }
}
