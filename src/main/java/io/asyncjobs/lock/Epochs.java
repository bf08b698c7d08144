package io.asyncjobs.lock;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * Hands out fencing epochs: the next value of {@code jobs_owner_epoch_seq}, recorded in {@code
 * job_owner_epochs} as the lock's current epoch in the same statement, and as its shard-aware epoch
 * (a release before shards updates the epoch alone, which tells its holdings apart). Recording it
 * waits for claims in flight under the previous epoch (they hold the row {@code FOR SHARE}), so
 * once a new holder has its epoch no older claim can still commit.
 */
public final class Epochs {

  /** EpochTake: a new epoch for a lock, recorded as its current one. */
  private static final String EPOCH_TAKE =
      """
      WITH e AS (SELECT nextval('jobs_owner_epoch_seq') AS epoch)
      INSERT INTO job_owner_epochs (lock_name, epoch, holder, taken_at, shard_aware_epoch)
      SELECT ?, e.epoch, ?, now(), e.epoch FROM e
      ON CONFLICT (lock_name) DO UPDATE
         SET epoch = EXCLUDED.epoch, holder = EXCLUDED.holder, taken_at = EXCLUDED.taken_at,
             shard_aware_epoch = EXCLUDED.shard_aware_epoch
      RETURNING epoch
      """;

  private Epochs() {}

  /** Takes an epoch on {@code connection}, which must be in auto-commit mode. */
  public static long take(Connection connection, String lockName, String holder)
      throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(EPOCH_TAKE)) {
      ps.setString(1, lockName);
      ps.setString(2, holder);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /** Takes an epoch on a connection of {@code dataSource}. */
  public static long take(DataSource dataSource, String lockName, String holder)
      throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      return take(c, lockName, holder);
    }
  }

  /** Where a lock takes its epochs from; the database in production, anything in a test. */
  @FunctionalInterface
  public interface Source {
    /** A new epoch for {@code holder}, larger than every earlier one. */
    long take(String holder) throws Exception;
  }
}
