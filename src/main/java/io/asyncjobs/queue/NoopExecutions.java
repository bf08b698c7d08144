package io.asyncjobs.queue;

import io.agroal.api.AgroalDataSource;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Arrays;
import java.util.UUID;

/**
 * The noop kind's record of its executions ({@code noop_executions}, migration V8): when each one
 * started and ended, on which replica and under which epoch, and when its effect landed. The fault
 * tests count executions and effects from it.
 */
@ApplicationScoped
public class NoopExecutions {

  /** NoopExecutionStart: an execution of a job starts. */
  private static final String NOOP_EXECUTION_START =
      """
      INSERT INTO noop_executions (id, uid, epoch, started_at, replica)
      VALUES (?, ?, ?, ?, ?)
      """;

  /**
   * NoopExecutionEnd: an execution ends, and when its effect was asked for, the effect lands at the
   * database's own time, but only while the job is still running under one of the given epochs (the
   * guard every effect of a kind needs); returns whether it landed.
   */
  private static final String NOOP_EXECUTION_END =
      """
      UPDATE noop_executions e
         SET ended_at = ?,
             executed_at = CASE WHEN ? AND EXISTS (SELECT 1 FROM jobs j
                                                     WHERE j.uid = e.uid AND j.status = 'running'
                                                       AND j.epoch = ANY (?))
                                THEN clock_timestamp() END
       WHERE id = ?
      RETURNING executed_at IS NOT NULL
      """;

  private final AgroalDataSource dataSource;

  NoopExecutions(AgroalDataSource dataSource) {
    this.dataSource = dataSource;
  }

  /** Records that {@code execution} of job {@code uid} starts now, under {@code epoch}. */
  public void start(UUID execution, UUID uid, long epoch, Instant startedAt, String replica)
      throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(NOOP_EXECUTION_START)) {
      ps.setObject(1, execution);
      ps.setObject(2, uid);
      ps.setLong(3, epoch);
      ps.setObject(4, JobRows.timestamp(startedAt));
      ps.setString(5, replica);
      ps.executeUpdate();
    }
  }

  /**
   * Records the end of {@code execution} and, when {@code effect}, its effect guarded by {@code
   * epochs}.
   *
   * @return whether the effect landed (false when not asked for)
   */
  public boolean end(UUID execution, Instant endedAt, boolean effect, long[] epochs)
      throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(NOOP_EXECUTION_END)) {
      ps.setObject(1, JobRows.timestamp(endedAt));
      ps.setBoolean(2, effect);
      ps.setArray(3, c.createArrayOf("bigint", Arrays.stream(epochs).boxed().toArray()));
      ps.setObject(4, execution);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getBoolean(1);
      }
    }
  }
}
