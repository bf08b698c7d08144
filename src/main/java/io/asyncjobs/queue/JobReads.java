package io.asyncjobs.queue;

import io.agroal.api.AgroalDataSource;
import io.asyncjobs.time.Clock;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * The read side of the queue: one job, the views of many, a page of the list, and the touch that
 * records a job's result was read. Pure database access with no state of its own, so any replica
 * may call it from a request handler.
 */
@ApplicationScoped
public class JobReads {

  /** Largest page {@link #listJobs} returns. */
  public static final int MAX_PAGE_SIZE = 500;

  /**
   * JobTouchOne: a job's result was used now; it is kept at least until the given time. The expiry
   * only ever moves later.
   */
  private static final String JOB_TOUCH_ONE =
      """
      UPDATE jobs
         SET last_accessed_at = ?,
             expires_at = GREATEST(expires_at, ?)
       WHERE uid = ?
      """;

  /** JobGetViewMany: jobs by their uids, as their views show them (without payloads). */
  private static final String JOB_GET_VIEW_MANY =
      "SELECT " + JobRows.VIEW_COLUMNS + " FROM jobs WHERE uid = ANY (?::uuid[])";

  /** JobGetOne: one job by its uid. */
  private static final String JOB_GET_ONE =
      "SELECT " + JobRows.COLUMNS + " FROM jobs WHERE uid = ?";

  /**
   * JobList: one page of jobs, newest first, with the filters asked for; its parameters in order
   * are owner kind and id, kind, status, the cursor, and the page size. Each form has an index that
   * ends in uid (an owner's, a kind and status's, the active rows'), or walks the primary key.
   *
   * <p>There is one statement per set of filters, so that each is planned for the index it can use:
   * a single statement with optional filters ({@code ? IS NULL OR ...}) would get one generic plan
   * for all of them. The sixteen forms are put together once, here, from fixed parts; no request
   * text ever reaches them.
   */
  private static final String[] JOB_LIST = new String[16];

  static {
    for (int form = 0; form < JOB_LIST.length; form++) {
      JOB_LIST[form] =
          "SELECT "
              + JobRows.VIEW_COLUMNS
              + " FROM jobs WHERE true"
              + ((form & 8) != 0 ? " AND owner_kind = ? AND owner_id = ?" : "")
              + ((form & 4) != 0 ? " AND kind = ?" : "")
              + ((form & 2) != 0 ? " AND status = ?" : "")
              + ((form & 1) != 0 ? " AND uid < ?" : "")
              + " ORDER BY uid DESC LIMIT ?";
    }
  }

  private final Clock clock;
  private final AgroalDataSource dataSource;

  JobReads(Clock clock, AgroalDataSource dataSource) {
    this.clock = clock;
    this.dataSource = dataSource;
  }

  /**
   * The job with this uid, payload and result decoded, or empty when there is none. One primary-key
   * read outside any transaction: every status poll and event stream calls it.
   */
  public Optional<Job> getJob(UUID uid) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_GET_ONE)) {
      ps.setObject(1, uid);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.of(JobRows.read(rs, 0)) : Optional.empty();
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not read job " + uid, e);
    }
  }

  /**
   * The jobs with these uids, without their payloads, in one primary-key read; uids without a job
   * are absent. The event streams poll every watched job through it.
   *
   * @throws SQLException when the database cannot be read
   */
  public Map<UUID, Job> getJobViews(List<UUID> uids) throws SQLException {
    Map<UUID, Job> found = new HashMap<>();
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_GET_VIEW_MANY)) {
      ps.setArray(1, c.createArrayOf("uuid", uids.toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          Job job = JobRows.read(rs, 0);
          found.put(job.uid, job);
        }
      }
    }
    return found;
  }

  /**
   * Marks the job's result as used now and keeps it at least {@code extendSeconds} from now. The
   * expiry only ever moves later.
   *
   * @return false when no job has this uid
   */
  public boolean touchJob(UUID uid, long extendSeconds) {
    if (extendSeconds < 0) {
      throw new IllegalArgumentException("extendSeconds must not be negative: " + extendSeconds);
    }
    Instant now = clock.now();
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_TOUCH_ONE)) {
      ps.setObject(1, JobRows.timestamp(now));
      ps.setObject(2, JobRows.timestamp(now.plusSeconds(extendSeconds)));
      ps.setObject(3, uid);
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      throw new IllegalStateException("could not touch job " + uid, e);
    }
  }

  /**
   * Jobs newest first, each filter optional (null means any).
   *
   * @param kind only this kind
   * @param status only this status
   * @param owner only this owner's jobs
   * @param before only jobs older than this uid: the {@code next} cursor of the previous page
   * @param limit page size, 1 to {@link #MAX_PAGE_SIZE}
   */
  public JobPage listJobs(String kind, JobStatus status, Owner owner, UUID before, int limit) {
    if (limit < 1 || limit > MAX_PAGE_SIZE) {
      throw new IllegalArgumentException("limit must be between 1 and " + MAX_PAGE_SIZE);
    }
    List<Object> params = new ArrayList<>();
    if (owner != null) {
      params.add(owner.kind());
      params.add(owner.id());
    }
    if (kind != null) {
      params.add(kind);
    }
    if (status != null) {
      params.add(status.dbValue());
    }
    if (before != null) {
      params.add(before);
    }
    params.add(limit + 1);
    String sql = listSql(owner != null, kind != null, status != null, before != null);
    List<Job> rows = new ArrayList<>();
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.size(); i++) {
        ps.setObject(i + 1, params.get(i));
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(JobRows.read(rs, 0));
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not list jobs", e);
    }
    if (rows.size() <= limit) {
      return new JobPage(rows, null);
    }
    List<Job> page = rows.subList(0, limit);
    return new JobPage(List.copyOf(page), page.get(limit - 1).uid);
  }

  /** The JobList form for this set of filters. */
  public static String listSql(
      boolean byOwner, boolean byKind, boolean byStatus, boolean fromCursor) {
    return JOB_LIST[
        (byOwner ? 8 : 0) | (byKind ? 4 : 0) | (byStatus ? 2 : 0) | (fromCursor ? 1 : 0)];
  }
}
