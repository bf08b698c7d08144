package io.asyncjobs.queue;

import io.agroal.api.AgroalDataSource;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Which shards have work (JobActiveShards): the engine starts and retires shard runners by it, and
 * the owners command lists it.
 */
@ApplicationScoped
public class JobShards {

  /**
   * JobActiveShards: every (kind, shard) that has a pending or running job. Pending jobs by a loose
   * scan of the claim index (one probe per shard, however long the queue); running ones are few
   * (bounded by the concurrency limits).
   */
  static final String JOB_ACTIVE_SHARDS =
      """
      WITH RECURSIVE pending AS (
        (SELECT kind, shard FROM jobs WHERE status = 'pending' ORDER BY kind, shard LIMIT 1)
        UNION ALL
        SELECT n.kind, n.shard FROM pending p,
               LATERAL (SELECT kind, shard FROM jobs
                         WHERE status = 'pending' AND (kind, shard) > (p.kind, p.shard)
                         ORDER BY kind, shard LIMIT 1) n)
      SELECT kind, shard FROM pending
      UNION
      SELECT DISTINCT kind, shard FROM jobs WHERE status = 'running'
      """;

  private final AgroalDataSource dataSource;

  JobShards(AgroalDataSource dataSource) {
    this.dataSource = dataSource;
  }

  /** Every shard of every kind that has a pending or running job now, by kind. */
  public Map<String, Set<String>> activeShards() {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_ACTIVE_SHARDS);
        ResultSet rs = ps.executeQuery()) {
      Map<String, Set<String>> shards = new HashMap<>();
      while (rs.next()) {
        shards.computeIfAbsent(rs.getString(1), k -> new HashSet<>()).add(rs.getString(2));
      }
      return shards;
    } catch (SQLException e) {
      throw new StoreException("JobActiveShards failed", e);
    }
  }
}
