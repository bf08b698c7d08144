package io.asyncjobs.queue;

import io.agroal.api.AgroalDataSource;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.UUID;

/**
 * The retention sweep's statements: finished jobs whose expiry has passed are found
 * (JobGetExpiredMany, JobCountExpired), deleted once their artifacts are gone (JobDeleteMany) or
 * kept for a later try (JobDeferExpiryMany), and old per-minute counts are forgotten
 * (JobPurgeFinishedMinutes). The current time is always a parameter.
 */
@ApplicationScoped
public class JobSweep {

  /**
   * JobGetExpiredMany: finished jobs of a kind whose retention has passed, oldest expiry first. A
   * job whose callback is still due (or under way) is kept until it is delivered or given up,
   * however short the kind's retention: deleting it would lose the callback.
   */
  public static final String JOB_GET_EXPIRED_MANY =
      "SELECT "
          + JobRows.COLUMNS
          + """
           FROM jobs
          WHERE kind = ? AND status IN ('done', 'failed') AND expires_at <= ?
            AND callback_due IS NULL
          ORDER BY expires_at
          LIMIT ?
          """;

  /** JobCountExpired: how many rows JobGetExpiredMany would page through; the same condition. */
  public static final String JOB_COUNT_EXPIRED =
      """
      SELECT count(*) FROM jobs
       WHERE kind = ? AND status IN ('done', 'failed') AND expires_at <= ?
         AND callback_due IS NULL
      """;

  /** JobPurgeFinishedMinutes: forgets one kind's per-minute finished counts older than a time. */
  private static final String JOB_PURGE_FINISHED_MINUTES =
      "DELETE FROM job_finished_minutes WHERE kind = ? AND minute < ?";

  /**
   * JobDeleteMany: removes swept jobs whose artifacts are gone. Never a pending or running one, nor
   * one whose callback became due again meanwhile (retried and ended again).
   */
  private static final String JOB_DELETE_MANY =
      "DELETE FROM jobs WHERE uid = ANY (?::uuid[]) AND status IN ('done', 'failed')"
          + " AND callback_due IS NULL";

  /** JobDeferExpiryMany: keeps jobs whose cleanup failed until a later sweep tries again. */
  private static final String JOB_DEFER_EXPIRY_MANY =
      "UPDATE jobs SET expires_at = ? WHERE uid = ANY (?::uuid[]) AND status IN ('done', 'failed')";

  private final AgroalDataSource dataSource;

  JobSweep(AgroalDataSource dataSource) {
    this.dataSource = dataSource;
  }

  /** Finished jobs of {@code kind} whose expiry has passed, at most {@code limit}. */
  public List<Job> expiredMany(String kind, Instant now, int limit) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_GET_EXPIRED_MANY)) {
      ps.setString(1, kind);
      ps.setObject(2, JobRows.timestamp(now));
      ps.setInt(3, limit);
      List<Job> expired = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          expired.add(JobRows.read(rs, 0));
        }
      }
      return expired;
    } catch (SQLException e) {
      throw new StoreException("JobGetExpiredMany failed for kind " + kind, e);
    }
  }

  /** Forgets the per-minute finished counts of {@code kind} from before {@code before}. */
  public void purgeFinishedMinutes(String kind, Instant before) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_PURGE_FINISHED_MINUTES)) {
      ps.setString(1, kind);
      ps.setObject(2, JobRows.timestamp(before));
      ps.executeUpdate();
    } catch (SQLException e) {
      throw new StoreException("JobPurgeFinishedMinutes failed", e);
    }
  }

  /** How many finished jobs of {@code kind} have expired by {@code now}. */
  public long countExpired(String kind, Instant now) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_COUNT_EXPIRED)) {
      ps.setString(1, kind);
      ps.setObject(2, JobRows.timestamp(now));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      throw new StoreException("JobCountExpired failed for kind " + kind, e);
    }
  }

  /** Deletes finished jobs; returns how many rows went. */
  public int deleteMany(Collection<UUID> uids) {
    return updateMany(JOB_DELETE_MANY, null, uids, "JobDeleteMany");
  }

  /** Moves the expiry of finished jobs to {@code until}. */
  public int deferExpiryMany(Collection<UUID> uids, Instant until) {
    return updateMany(JOB_DEFER_EXPIRY_MANY, until, uids, "JobDeferExpiryMany");
  }

  private int updateMany(String sql, Instant instant, Collection<UUID> uids, String name) {
    if (uids.isEmpty()) {
      return 0;
    }
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      int index = 1;
      if (instant != null) {
        ps.setObject(index++, JobRows.timestamp(instant));
      }
      Array array = c.createArrayOf("uuid", uids.toArray(UUID[]::new));
      ps.setArray(index, array);
      return ps.executeUpdate();
    } catch (SQLException e) {
      throw new StoreException(name + " failed", e);
    }
  }
}
