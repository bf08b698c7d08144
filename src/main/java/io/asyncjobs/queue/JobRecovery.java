package io.asyncjobs.queue;

import io.agroal.api.AgroalDataSource;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The statements that recover running rows: rows no task of this process works on go back to
 * pending or fail (JobRescueMany), and an owner that took its lock back at a new epoch keeps the
 * jobs it still runs (JobAdoptMany). Both are fenced like a claim and take the current time as a
 * parameter.
 */
@ApplicationScoped
public class JobRecovery {

  /**
   * JobRescueMany: running rows of a kind that no task of this process works on were left by an
   * earlier owner (or their task vanished). Each goes back to pending with one more retry, or fails
   * once it has used up its retries. Rows of this owner's epoch are rescued at once; rows of older
   * epochs only once their owners have certainly stopped (the caller says so). Rows of other
   * shards, and rows stamped by a newer owner, are left alone, and nothing is rescued once a newer
   * epoch was taken.
   */
  private static final String JOB_RESCUE_MANY =
      "WITH "
          + Fence.CTE
          + JobOutcomes.putBackOrFail(
              "'abandoned: its processor vanished ' || (j.retry_count + 1)"
                  + " || ' times (max-retries ' || p.max_retries || ')'")
          + """
             FROM (SELECT ?::int AS max_retries, ?::timestamptz AS now, ?::bigint AS retention) AS p
            WHERE j.kind = ? AND j.shard = ? AND j.status = 'running'
              AND NOT (j.uid = ANY (?::uuid[]))
              AND (j.epoch = ? OR (COALESCE(j.epoch, 0) < ? AND ?))
              AND EXISTS (SELECT 1 FROM fence)
           RETURNING j.status
           """;

  /**
   * JobAdoptMany: an owner that took the lock back at a new epoch keeps the jobs it is still
   * running: rows still running under an epoch their task's row may carry (the claim's, or one
   * adopted under since) are stamped with the new one. A row someone else touched meanwhile is not.
   * Fenced like a claim.
   */
  private static final String JOB_ADOPT_MANY =
      "WITH "
          + Fence.CTE
          + """
           UPDATE jobs j
              SET epoch = (SELECT epoch FROM fence), updated_at = ?
             FROM (SELECT DISTINCT * FROM unnest(?::uuid[], ?::bigint[])) AS a(uid, epoch)
            WHERE j.uid = a.uid AND j.status = 'running' AND j.epoch = a.epoch
              AND EXISTS (SELECT 1 FROM fence)
           RETURNING j.uid
           """;

  private final AgroalDataSource dataSource;

  JobRecovery(AgroalDataSource dataSource) {
    this.dataSource = dataSource;
  }

  /**
   * Recovers running rows of {@code kind} in {@code shard} that are not in {@code inFlight}: those
   * of {@code epoch} always, those of older epochs only when {@code olderToo}.
   *
   * @return how many went back to pending and how many failed
   */
  public RescueCounts rescueMany(
      String kind,
      String shard,
      Collection<UUID> inFlight,
      long epoch,
      boolean olderToo,
      int maxRetries,
      Duration retention,
      Instant now) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_RESCUE_MANY)) {
      int next = Fence.bind(ps, 1, epoch);
      ps.setInt(next++, maxRetries);
      ps.setObject(next++, JobRows.timestamp(now));
      ps.setLong(next++, retention.toSeconds());
      ps.setString(next++, kind);
      ps.setString(next++, shard);
      ps.setArray(next++, c.createArrayOf("uuid", inFlight.toArray(UUID[]::new)));
      ps.setLong(next++, epoch);
      ps.setLong(next++, epoch);
      ps.setBoolean(next, olderToo);
      int requeued = 0;
      int failed = 0;
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          if (JobStatus.PENDING.dbValue().equals(rs.getString(1))) {
            requeued++;
          } else {
            failed++;
          }
        }
      }
      return new RescueCounts(requeued, failed);
    } catch (SQLException e) {
      throw new StoreException("JobRescueMany failed for kind " + kind, e);
    }
  }

  /**
   * Stamps the rows of jobs this process still runs with {@code epoch}, the one it just took.
   *
   * <p>A row counts as still this process's when it runs under any epoch its task's row may carry:
   * the claim's, one adopted under since, or {@code epoch} itself, for an adoption that committed
   * but whose answer was lost. Only this process ever stamps those epochs.
   *
   * @param heldUnder each job and the epochs its row may carry while its task holds it
   */
  public Adopted adoptMany(Map<UUID, long[]> heldUnder, long epoch, Instant now) {
    if (heldUnder.isEmpty()) {
      return new Adopted(false, Set.of());
    }
    List<UUID> uids = new ArrayList<>();
    List<Long> epochs = new ArrayList<>();
    heldUnder.forEach(
        (uid, held) -> {
          for (long e : held) {
            uids.add(uid);
            epochs.add(e);
          }
          uids.add(uid);
          epochs.add(epoch);
        });
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_ADOPT_MANY)) {
      int next = Fence.bind(ps, 1, epoch);
      ps.setObject(next++, JobRows.timestamp(now));
      ps.setArray(next++, c.createArrayOf("uuid", uids.toArray(UUID[]::new)));
      ps.setArray(next, c.createArrayOf("bigint", epochs.toArray()));
      Set<UUID> adopted = JobRows.uids(ps);
      return new Adopted(adopted.isEmpty() && !Fence.holds(c, epoch), adopted);
    } catch (SQLException e) {
      throw new StoreException("JobAdoptMany failed", e);
    }
  }

  /**
   * What one adoption did.
   *
   * @param fenced true when a newer epoch was taken
   * @param adopted the jobs now stamped with the new epoch
   */
  public record Adopted(boolean fenced, Set<UUID> adopted) {}

  /**
   * What one rescue did.
   *
   * @param requeued rows put back to pending
   * @param failed rows failed for having used up their retries
   */
  public record RescueCounts(int requeued, int failed) {}
}
