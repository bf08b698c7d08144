package io.asyncjobs.queue;

import io.agroal.api.AgroalDataSource;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The statements a callback's delivery makes on {@code jobs}: taking a shard's due callbacks under
 * a lease, and recording what became of one delivery while that lease stands. The delivery itself
 * (the POST, its signature and backoff) is {@code io.asyncjobs.callbacks.CallbackDelivery}'s.
 */
@ApplicationScoped
public class CallbackStore {

  /**
   * JobCallbackTake: the shard's due callbacks, the longest due first, under the fence; each gets
   * its lease as the new due time, so that no other delivery takes it meanwhile.
   */
  static final String JOB_CALLBACK_TAKE =
      "WITH "
          + Fence.CTE
          + " UPDATE jobs SET callback_due = ? WHERE uid IN (SELECT uid FROM jobs"
          + "   WHERE kind = ? AND shard = ? AND callback_due IS NOT NULL AND callback_due <= ?"
          + "   AND EXISTS (SELECT 1 FROM fence)"
          + "   ORDER BY callback_due LIMIT ? FOR UPDATE SKIP LOCKED)"
          + " RETURNING "
          + JobRows.VIEW_COLUMNS;

  /**
   * JobCallbackTakeRetired: as JobCallbackTake, for the kind's shards the current mapping does not
   * name (retired shards, whose runners are gone once they hold no pending or running job). Asked
   * by the kind's sweeping shard, under its fence; the lease keeps a retired shard's own runner,
   * where one is still left, from sending the same callback meanwhile.
   */
  static final String JOB_CALLBACK_TAKE_RETIRED =
      "WITH "
          + Fence.CTE
          + " UPDATE jobs SET callback_due = ? WHERE uid IN (SELECT uid FROM jobs"
          + "   WHERE kind = ? AND shard <> ALL (?::text[]) AND callback_due IS NOT NULL"
          + "   AND callback_due <= ? AND EXISTS (SELECT 1 FROM fence)"
          + "   ORDER BY callback_due LIMIT ? FOR UPDATE SKIP LOCKED)"
          + " RETURNING "
          + JobRows.VIEW_COLUMNS;

  /**
   * JobCallbackRecord: what became of one delivery, written only while the row still holds the
   * lease that delivery set (a job retried and ended again meanwhile has a new callback).
   */
  static final String JOB_CALLBACK_RECORD =
      "UPDATE jobs SET callback = ?::jsonb, callback_due = ? WHERE uid = ? AND callback_due = ?";

  private final AgroalDataSource dataSource;

  CallbackStore(AgroalDataSource dataSource) {
    this.dataSource = dataSource;
  }

  /**
   * JobCallbackTake: up to {@code limit} of the shard's callbacks due at {@code now}, each now
   * leased until {@code lease}; none once {@code epoch} is no longer the newest.
   *
   * @throws IllegalStateException when the database cannot be reached
   */
  public List<Job> takeDue(
      String kind, String shard, long epoch, Instant now, Instant lease, int limit) {
    return take(kind, shard, null, epoch, now, lease, limit);
  }

  /**
   * JobCallbackTakeRetired: as {@link #takeDue}, from the kind's shards that {@code mapped} does
   * not name.
   *
   * @throws IllegalStateException when the database cannot be reached
   */
  public List<Job> takeRetired(
      String kind, List<String> mapped, long epoch, Instant now, Instant lease, int limit) {
    return take(kind, null, mapped, epoch, now, lease, limit);
  }

  /** One take: of the shard's callbacks, or (shard null) of those outside {@code mapped}. */
  private List<Job> take(
      String kind,
      String shard,
      List<String> mapped,
      long epoch,
      Instant now,
      Instant lease,
      int limit) {
    boolean own = shard != null;
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(own ? JOB_CALLBACK_TAKE : JOB_CALLBACK_TAKE_RETIRED)) {
      ps.setLong(1, epoch);
      ps.setObject(2, JobRows.timestamp(lease));
      ps.setString(3, kind);
      if (own) {
        ps.setString(4, shard);
      } else {
        ps.setArray(4, c.createArrayOf("text", mapped.toArray(String[]::new)));
      }
      ps.setObject(5, JobRows.timestamp(now));
      ps.setInt(6, limit);
      List<Job> jobs = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          jobs.add(JobRows.read(rs, 0));
        }
      }
      return jobs;
    } catch (SQLException e) {
      throw new IllegalStateException(
          (own ? "JobCallbackTake" : "JobCallbackTakeRetired") + " failed for kind " + kind, e);
    }
  }

  /**
   * JobCallbackRecord: the delivery state of job {@code uid} and when it is due again (null:
   * never), written only while the row still holds {@code lease}.
   *
   * @throws SQLException when the database cannot be reached; the lease then runs out and the
   *     callback is taken again
   */
  public void record(UUID uid, Instant lease, Map<String, Object> state, Instant next)
      throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_CALLBACK_RECORD)) {
      ps.setString(1, JsonCodec.encode(state));
      ps.setObject(2, next == null ? null : JobRows.timestamp(next));
      ps.setObject(3, uid);
      ps.setObject(4, JobRows.timestamp(lease));
      ps.executeUpdate();
    }
  }
}
