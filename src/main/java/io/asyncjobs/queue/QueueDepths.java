package io.asyncjobs.queue;

import io.agroal.api.AgroalDataSource;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Map;

/** How many jobs each kind, and each shard of it, holds in each status, for the queue gauges. */
@ApplicationScoped
public class QueueDepths {

  /**
   * JobCountByKindAndStatus: pending and running jobs counted by kind and shard from their partial
   * index (what is queued or under way, never history), with when the longest-waiting due pending
   * job of each became due (its creation, or its run_after when later; jobs delayed until later or
   * waiting out a retry's backoff are not waiting for a turn); in the same pass, grouped by kind
   * and owner instead, the same time for each owner (owner rows have no shard or status); done and
   * failed jobs from the totals the triggers keep, which have no shard.
   */
  public static final String JOB_COUNT_BY_KIND_AND_STATUS =
      """
      SELECT kind, shard, status,
             CASE WHEN GROUPING(shard) = 1
                  THEN COALESCE(owner_kind, '') || ':' || COALESCE(owner_id, '') END,
             count(*),
             min(GREATEST(created_at, COALESCE(run_after, created_at)))
               FILTER (WHERE status = 'pending' AND delayed_until IS NULL)
        FROM jobs
       WHERE status IN ('pending', 'running')
       GROUP BY GROUPING SETS ((kind, shard, status), (kind, owner_kind, owner_id))
       UNION ALL
      SELECT kind, NULL, status, NULL, jobs, NULL FROM job_totals
      """;

  /** How many owners per kind the waiting-time gauges show: those waiting longest. */
  public static final int OWNERS_SHOWN = 10;

  private final AgroalDataSource dataSource;

  QueueDepths(AgroalDataSource dataSource) {
    this.dataSource = dataSource;
  }

  /**
   * Every kind's counts now. A kind without jobs is absent, and so is a shard without pending or
   * running jobs.
   *
   * @throws SQLException when the database cannot be read
   */
  public Depths read() throws SQLException {
    Map<String, Map<JobStatus, Long>> counts = new HashMap<>();
    Map<String, Map<String, Map<JobStatus, Long>>> byShard = new HashMap<>();
    Map<String, Instant> oldest = new HashMap<>();
    Map<String, Map<String, Instant>> owners = new HashMap<>();
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_COUNT_BY_KIND_AND_STATUS);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        String kind = rs.getString(1);
        String owner = rs.getString(4);
        OffsetDateTime due = rs.getObject(6, OffsetDateTime.class);
        if (owner != null) {
          if (due != null) {
            owners.computeIfAbsent(kind, k -> new HashMap<>()).put(owner, due.toInstant());
          }
          continue;
        }
        String shard = rs.getString(2);
        JobStatus status = JobStatus.fromDbValue(rs.getString(3)).orElse(null);
        if (status == null) {
          continue;
        }
        long n = rs.getLong(5);
        counts
            .computeIfAbsent(kind, k -> new EnumMap<>(JobStatus.class))
            .merge(status, n, Long::sum);
        if (shard != null) {
          byShard
              .computeIfAbsent(kind, k -> new HashMap<>())
              .computeIfAbsent(shard, k -> new EnumMap<>(JobStatus.class))
              .put(status, n);
        }
        if (due != null) {
          oldest.merge(kind, due.toInstant(), (a, b) -> a.isBefore(b) ? a : b);
        }
      }
    }
    return new Depths(counts, byShard, oldest, longestWaiting(owners));
  }

  /** Per kind, the {@value #OWNERS_SHOWN} owners waiting longest, and since when. */
  private static Map<String, Map<String, Instant>> longestWaiting(
      Map<String, Map<String, Instant>> all) {
    Map<String, Map<String, Instant>> shown = new HashMap<>();
    all.forEach(
        (kind, owners) -> {
          Map<String, Instant> top = new HashMap<>();
          owners.entrySet().stream()
              .sorted(Map.Entry.comparingByValue())
              .limit(OWNERS_SHOWN)
              .forEach(e -> top.put(e.getKey(), e.getValue()));
          shown.put(kind, top);
        });
    return shown;
  }

  /**
   * The counts of {@link #read}.
   *
   * @param counts per kind, jobs by status (a status without jobs is absent)
   * @param byShard per kind and shard, its pending and running jobs by status
   * @param oldestPending per kind, the creation time of its oldest pending job
   * @param oldestDueByOwner per kind, the owners waiting longest (owner key {@code kind:id}) and
   *     since when their longest-waiting due job became due
   */
  public record Depths(
      Map<String, Map<JobStatus, Long>> counts,
      Map<String, Map<String, Map<JobStatus, Long>>> byShard,
      Map<String, Instant> oldestPending,
      Map<String, Map<String, Instant>> oldestDueByOwner) {}
}
