package io.asyncjobs.queue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * The fencing epoch as the engine's statements check it: every statement that starts work, and
 * every write to a running row, carries the writer's epoch, so that an owner that lost the lock
 * cannot change what the next owner claimed.
 */
final class Fence {

  /**
   * The fence every statement that starts work begins with: the lock's recorded epoch, locked FOR
   * SHARE, present only while the caller's epoch is still the newest. Epochs come from one sequence
   * for every lock, so the epoch alone names the holding (whichever shard's lock it is of). Taking
   * a new epoch ({@code io.asyncjobs.lock.Epochs}) updates that row, so it waits for these
   * statements to commit, and once it has, none under the older epoch can start anything.
   */
  static final String CTE =
      "fence AS (SELECT epoch FROM job_owner_epochs WHERE epoch = ? FOR SHARE)";

  /** EpochHolds: whether an epoch is still its lock's newest (a new epoch updates the row). */
  static final String EPOCH_HOLDS = "SELECT 1 FROM job_owner_epochs WHERE epoch = ?";

  private Fence() {}

  /** Binds {@link #CTE}'s epoch at {@code next}; returns the index of the next parameter. */
  static int bind(PreparedStatement ps, int next, long epoch) throws SQLException {
    ps.setLong(next++, epoch);
    return next;
  }

  /** Whether {@code epoch} is still the lock's newest. */
  static boolean holds(Connection c, long epoch) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(EPOCH_HOLDS)) {
      bind(ps, 1, epoch);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }
}
