package io.asyncjobs.operations;

import io.agroal.api.AgroalDataSource;
import io.asyncjobs.engine.JobService;
import io.asyncjobs.engine.ServiceManager;
import io.asyncjobs.lock.OwnerLock;
import io.asyncjobs.lock.OwnerLocks;
import io.asyncjobs.lock.OwnerStatus;
import io.asyncjobs.lock.PostgresMembers;
import io.asyncjobs.lock.PostgresOwnerLock;
import io.quarkus.runtime.annotations.RegisterForReflection;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.jboss.logging.Logger;

/**
 * Who owns each shard of a kind, as any replica can tell: this replica's own locks say whether it
 * holds them; a Lease another replica holds is named by what this replica's lock last read of it;
 * an advisory lock another replica holds is found in {@code pg_locks}, its session naming the
 * replica. Since when and under which epoch come from the lock's last holding in {@code
 * job_owner_epochs}.
 */
@ApplicationScoped
public class ShardOwners {

  private static final Logger LOG = Logger.getLogger(ShardOwners.class);

  /**
   * ShardHoldings: for each lock, its last holding, and the session holding its advisory key (in
   * PostgreSQL mode; none in Kubernetes mode).
   */
  private static final String SHARD_HOLDINGS =
      """
      SELECT k.lock_name, e.holder, e.epoch, e.taken_at,
             (SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
               WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
                 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                 AND ((l.classid::bigint << 32) | l.objid::bigint) = k.key
               LIMIT 1)
        FROM unnest(?::text[], ?::bigint[]) AS k(lock_name, key)
        LEFT JOIN job_owner_epochs e ON e.lock_name = k.lock_name
      """;

  /**
   * One shard's owner.
   *
   * @param shard the shard's key
   * @param lock the lock's name (the Lease, or what the advisory key is derived from)
   * @param holder the replica that holds it, or null when nobody does (or it cannot be told)
   * @param since when that holding began, when known
   * @param epoch the holding's fencing epoch, when known
   * @param ownedHere whether the replica answering holds it
   */
  @RegisterForReflection(registerFullHierarchy = true)
  public record ShardOwner(
      String shard,
      String lock,
      @Schema(nullable = true) String holder,
      @Schema(nullable = true) Instant since,
      @Schema(nullable = true) Long epoch,
      boolean ownedHere) {}

  /**
   * A lock's last holding, as the database records it.
   *
   * @param holder the replica that took its newest epoch, or null when none was ever taken
   * @param epoch that epoch, or null
   * @param takenAt when it was taken, or null
   * @param session the {@code application_name} of the session holding the lock's advisory key now,
   *     or null (always null in Kubernetes mode)
   */
  @RegisterForReflection(registerFullHierarchy = true)
  public record Holding(String holder, Long epoch, Instant takenAt, String session) {

    /** The replica whose session holds the advisory key now, or null. */
    public String sessionHolder() {
      return PostgresMembers.identityOf(session);
    }

    /** Whether the recorded holding is {@code replica}'s (whose name a session may shorten). */
    public boolean isOf(String replica) {
      if (holder == null || replica == null) {
        return false;
      }
      if (holder.equals(replica)) {
        return true;
      }
      int cut = replica.indexOf('~');
      return cut > 0 && holder.startsWith(replica.substring(0, cut));
    }
  }

  private final ServiceManager services;
  private final OwnerLocks locks;
  private final AgroalDataSource dataSource;

  ShardOwners(ServiceManager services, OwnerLocks locks, AgroalDataSource dataSource) {
    this.services = services;
    this.locks = locks;
    this.dataSource = dataSource;
  }

  /** The owners of every registered job service's shards, by kind. */
  public Map<String, List<ShardOwner>> byKind() {
    Map<String, OwnerLock> all = locks.all();
    Map<String, List<String>> shardsByKind = new HashMap<>();
    for (String kind : services.kinds()) {
      services.jobService(kind).map(JobService::shards).ifPresent(s -> shardsByKind.put(kind, s));
    }
    Map<String, Holding> holdings = holdings(all.values().stream().map(OwnerLock::name).toList());
    Map<String, List<ShardOwner>> owners = new HashMap<>();
    shardsByKind.forEach(
        (kind, shards) -> {
          List<ShardOwner> list = new ArrayList<>();
          for (String shard : shards) {
            OwnerLock lock = all.get(shard);
            if (lock != null) {
              list.add(ownerOf(shard, lock, holdings.get(lock.name())));
            }
          }
          owners.put(kind, list);
        });
    return owners;
  }

  private ShardOwner ownerOf(String shard, OwnerLock lock, Holding holding) {
    OwnerStatus status = lock.status();
    if (status.owner()) {
      return new ShardOwner(
          shard, lock.name(), lock.identity(), status.since(), status.epoch(), true);
    }
    String holder = lock.holder();
    if (holder == null && holding != null) {
      holder = holding.sessionHolder();
    }
    if (holder == null) {
      return new ShardOwner(shard, lock.name(), null, null, null, false);
    }
    boolean recorded = holding != null && holding.isOf(holder);
    return new ShardOwner(
        shard,
        lock.name(),
        recorded ? holding.holder() : holder,
        recorded ? holding.takenAt() : null,
        recorded ? holding.epoch() : null,
        false);
  }

  /**
   * The last holding of each of {@code lockNames}, by lock name; empty when the database cannot be
   * read.
   */
  public Map<String, Holding> holdings(List<String> lockNames) {
    try {
      return read(lockNames);
    } catch (SQLException e) {
      LOG.debugf("Could not read the shards' holdings: %s", e.getMessage());
      return new HashMap<>();
    }
  }

  /**
   * The last holding of each of {@code lockNames}, by lock name.
   *
   * @throws SQLException when the database cannot be read
   */
  public Map<String, Holding> read(List<String> lockNames) throws SQLException {
    Map<String, Holding> holdings = new HashMap<>();
    if (lockNames.isEmpty()) {
      return holdings;
    }
    String[] names = lockNames.toArray(String[]::new);
    Long[] keys = new Long[names.length];
    for (int i = 0; i < names.length; i++) {
      keys[i] = PostgresOwnerLock.keyOf(names[i]);
    }
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(SHARD_HOLDINGS)) {
      ps.setArray(1, c.createArrayOf("text", names));
      ps.setArray(2, c.createArrayOf("bigint", keys));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          Timestamp taken = rs.getTimestamp(4);
          long epoch = rs.getLong(3);
          holdings.put(
              rs.getString(1),
              new Holding(
                  rs.getString(2),
                  rs.wasNull() ? null : epoch,
                  taken == null ? null : taken.toInstant(),
                  rs.getString(5)));
        }
      }
    }
    return holdings;
  }
}
