package io.asyncjobs.operations;

import io.agroal.api.AgroalDataSource;
import io.asyncjobs.engine.JobService;
import io.asyncjobs.engine.ServiceManager;
import io.asyncjobs.lock.OwnerLock;
import io.asyncjobs.lock.OwnerLocks;
import io.asyncjobs.lock.OwnerStatus;
import io.asyncjobs.lock.PostgresMembers;
import io.asyncjobs.lock.PostgresOwnerLock;
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
  public record ShardOwner(
      String shard, String lock, String holder, Instant since, Long epoch, boolean ownedHere) {}

  private record Holding(String holder, long epoch, Instant takenAt, String session) {}

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
    Map<String, Holding> holdings = holdings(all);
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
    if (holder == null && holding != null && holding.session() != null) {
      holder = PostgresMembers.identityOf(holding.session());
    }
    if (holder == null) {
      return new ShardOwner(shard, lock.name(), null, null, null, false);
    }
    boolean recorded = holding != null && holding.holder() != null && sameReplica(holding, holder);
    return new ShardOwner(
        shard,
        lock.name(),
        recorded ? holding.holder() : holder,
        recorded ? holding.takenAt() : null,
        recorded ? holding.epoch() : null,
        false);
  }

  /** Whether the recorded holder is {@code holder}, which a session name may have shortened. */
  private static boolean sameReplica(Holding holding, String holder) {
    if (holding.holder().equals(holder)) {
      return true;
    }
    int cut = holder.indexOf('~');
    return cut > 0 && holding.holder().startsWith(holder.substring(0, cut));
  }

  private Map<String, Holding> holdings(Map<String, OwnerLock> all) {
    Map<String, Holding> holdings = new HashMap<>();
    if (all.isEmpty()) {
      return holdings;
    }
    String[] names = all.values().stream().map(OwnerLock::name).toArray(String[]::new);
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
          holdings.put(
              rs.getString(1),
              new Holding(
                  rs.getString(2),
                  rs.getLong(3),
                  taken == null ? null : taken.toInstant(),
                  rs.getString(5)));
        }
      }
    } catch (SQLException e) {
      LOG.debugf("Could not read the shards' holdings: %s", e.getMessage());
    }
    return holdings;
  }
}
