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

/** How many jobs each kind holds in each status, for the queue-depth gauges. */
@ApplicationScoped
public class QueueDepths {

  /**
   * JobCountByKindAndStatus: pending and running jobs counted from their partial index (what is
   * queued or under way, never history), with the creation time of the oldest pending job of each
   * kind; done and failed jobs from the totals the triggers keep.
   */
  public static final String JOB_COUNT_BY_KIND_AND_STATUS =
      """
      SELECT kind, status, count(*), min(created_at)
        FROM jobs
       WHERE status IN ('pending', 'running')
       GROUP BY 1, 2
       UNION ALL
      SELECT kind, status, jobs, NULL FROM job_totals
      """;

  private final AgroalDataSource dataSource;

  QueueDepths(AgroalDataSource dataSource) {
    this.dataSource = dataSource;
  }

  /**
   * Every kind's counts now. A kind without jobs is absent.
   *
   * @throws SQLException when the database cannot be read
   */
  public Depths read() throws SQLException {
    Map<String, Map<JobStatus, Long>> counts = new HashMap<>();
    Map<String, Instant> oldest = new HashMap<>();
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_COUNT_BY_KIND_AND_STATUS);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        String kind = rs.getString(1);
        JobStatus status = JobStatus.fromDbValue(rs.getString(2)).orElse(null);
        if (status == null) {
          continue;
        }
        counts
            .computeIfAbsent(kind, k -> new EnumMap<>(JobStatus.class))
            .put(status, rs.getLong(3));
        OffsetDateTime created = rs.getObject(4, OffsetDateTime.class);
        if (created != null && status == JobStatus.PENDING) {
          oldest.put(kind, created.toInstant());
        }
      }
    }
    return new Depths(counts, oldest);
  }

  /**
   * The counts of {@link #read}.
   *
   * @param counts per kind, jobs by status (a status without jobs is absent)
   * @param oldestPending per kind, the creation time of its oldest pending job
   */
  public record Depths(
      Map<String, Map<JobStatus, Long>> counts, Map<String, Instant> oldestPending) {}
}
