package io.asyncjobs.lock;

import io.agroal.api.AgroalDataSource;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Whether a replica of a release before shards holds the unsharded lock ({@code jobs.lock.name})
 * now. Such a replica claims and rescues every row of every kind, whatever its shard, so a replica
 * with a sharded mapping must hold no shard meanwhile. Its holding is told apart by the epoch
 * record: this release writes {@code shard_aware_epoch} equal to the epoch it takes, an older one
 * updates the epoch only. The record alone may be old news (the holding may have ended long ago),
 * so the lock must also be held now: its advisory key granted to a session, or its Lease renewed
 * within its duration by the recorded holder.
 */
public interface OlderRelease {

  /**
   * OlderReleaseHolding: the last holding of the lock, when a release before shards took it. Epochs
   * of this release set {@code shard_aware_epoch} to the epoch.
   */
  String OLDER_RELEASE_HOLDING =
      """
      SELECT holder FROM job_owner_epochs
       WHERE lock_name = ? AND shard_aware_epoch IS DISTINCT FROM epoch
      """;

  /**
   * OlderReleaseSession: the {@code application_name} of each session of this database that holds
   * the lock's advisory key now (in PostgreSQL mode both releases take the same key). This release
   * names its lock sessions after the replica; an older release does not.
   */
  String ADVISORY_KEY_HOLDERS =
      """
      SELECT COALESCE(a.application_name, '') FROM pg_locks l
        LEFT JOIN pg_stat_activity a ON a.pid = l.pid
       WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
         AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
         AND ((l.classid::bigint << 32) | l.objid::bigint) = ?
      """;

  /**
   * The replica of an older release that holds the lock now, if any.
   *
   * @throws RuntimeException when that cannot be told (the database or the API server is away)
   */
  Optional<String> holder();

  /** Never an older release: without a lock, or in tests. */
  static OlderRelease none() {
    return Optional::empty;
  }

  /**
   * PostgreSQL mode: the advisory key of {@code lockName} is held, in this database, by a session
   * that this release did not name, while the last epoch was an older release's.
   */
  static OlderRelease postgres(AgroalDataSource dataSource, String lockName) {
    return () -> {
      Optional<String> recorded = recordedHolder(dataSource, lockName);
      if (recorded.isEmpty()) {
        return recorded;
      }
      try (Connection c = dataSource.getConnection();
          PreparedStatement ps = c.prepareStatement(ADVISORY_KEY_HOLDERS)) {
        ps.setLong(1, PostgresOwnerLock.keyOf(lockName));
        try (ResultSet rs = ps.executeQuery()) {
          // Held by a session of this release (say one that has just taken the lock and not yet
          // written its epoch): no older release holds it.
          return rs.next() && PostgresMembers.identityOf(rs.getString(1)) == null
              ? recorded
              : Optional.empty();
        }
      } catch (SQLException e) {
        throw new IllegalStateException("could not read the advisory locks: " + e.getMessage(), e);
      }
    };
  }

  /**
   * Kubernetes mode: the Lease {@code lockName} names the recorded holder of an older epoch and was
   * renewed within its duration (by the wall clock, as read from {@code now}: a few seconds of skew
   * only delay the end of the wait).
   */
  static OlderRelease kubernetes(
      AgroalDataSource dataSource,
      KubernetesClient client,
      String namespace,
      String lockName,
      Supplier<Instant> now) {
    return () -> {
      Optional<String> recorded = recordedHolder(dataSource, lockName);
      if (recorded.isEmpty()) {
        return recorded;
      }
      Lease lease = client.leases().inNamespace(namespace).withName(lockName).get();
      String holder = LeaseHolders.liveHolder(lease, now.get());
      return recorded.get().equals(holder) ? recorded : Optional.empty();
    };
  }

  private static Optional<String> recordedHolder(AgroalDataSource dataSource, String lockName) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(OLDER_RELEASE_HOLDING)) {
      ps.setString(1, lockName);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.ofNullable(rs.getString(1)) : Optional.empty();
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not read the epoch record: " + e.getMessage(), e);
    }
  }
}
