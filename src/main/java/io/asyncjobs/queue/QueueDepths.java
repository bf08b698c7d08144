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
   * index (what is queued or under way, never history), with the creation time of the oldest
   * pending job of each; done and failed jobs from the totals the triggers keep, which have no
   * shard.
   */
  public static final String JOB_COUNT_BY_KIND_AND_STATUS =
      """
      SELECT kind, shard, status, count(*), min(created_at)
        FROM jobs
       WHERE status IN ('pending', 'running')
       GROUP BY 1, 2, 3
       UNION ALL
      SELECT kind, NULL, status, jobs, NULL FROM job_totals
      """;

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
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_COUNT_BY_KIND_AND_STATUS);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        String kind = rs.getString(1);
        String shard = rs.getString(2);
        JobStatus status = JobStatus.fromDbValue(rs.getString(3)).orElse(null);
        if (status == null) {
          continue;
        }
        long n = rs.getLong(4);
        counts
            .computeIfAbsent(kind, k -> new EnumMap<>(JobStatus.class))
            .merge(status, n, Long::sum);
        if (shard != null) {
          byShard
              .computeIfAbsent(kind, k -> new HashMap<>())
              .computeIfAbsent(shard, k -> new EnumMap<>(JobStatus.class))
              .put(status, n);
        }
        OffsetDateTime created = rs.getObject(5, OffsetDateTime.class);
        if (created != null && status == JobStatus.PENDING) {
          oldest.merge(kind, created.toInstant(), (a, b) -> a.isBefore(b) ? a : b);
        }
      }
    }
    return new Depths(counts, byShard, oldest);
  }

  /**
   * The counts of {@link #read}.
   *
   * @param counts per kind, jobs by status (a status without jobs is absent)
   * @param byShard per kind and shard, its pending and running jobs by status
   * @param oldestPending per kind, the creation time of its oldest pending job
   */
  public record Depths(
      Map<String, Map<JobStatus, Long>> counts,
      Map<String, Map<String, Map<JobStatus, Long>>> byShard,
      Map<String, Instant> oldestPending) {}
}
