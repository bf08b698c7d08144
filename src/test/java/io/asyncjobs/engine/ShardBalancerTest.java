package io.asyncjobs.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.lock.LockMetrics;
import io.asyncjobs.lock.OlderRelease;
import io.asyncjobs.lock.OwnerLock;
import io.asyncjobs.lock.OwnerLocks;
import io.asyncjobs.lock.PostgresMembers;
import io.asyncjobs.lock.PostgresOwnerLock;
import io.asyncjobs.lock.Trust;
import io.asyncjobs.testing.Database;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.IntStream;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Replicas in this process, each with advisory locks of its own for ten shards, balanced by the
 * members their lock sessions show: the shards spread evenly, a replica that goes away leaves its
 * shards to the others, and one that joins takes its share.
 */
@QuarkusTest
class ShardBalancerTest {

  @Inject Database db;

  @ConfigProperty(name = "quarkus.datasource.jdbc.url")
  String url;

  private final String base = "bal-" + UUID.randomUUID().toString().substring(0, 8);
  private final List<String> shards = IntStream.range(0, 10).mapToObj(i -> "kind-" + i).toList();
  private final List<Replica> replicas = new ArrayList<>();

  @AfterEach
  void stopAll() {
    replicas.forEach(r -> r.locks.releaseAll());
  }

  @Test
  void shouldGiveEachReplicaTheSharesOfItsNameOrder() {
    Set<String> live = Set.of("b", "a", "c");
    assertThat(target("a", live, 10)).isEqualTo(4);
    assertThat(target("b", live, 10)).isEqualTo(3);
    assertThat(target("c", live, 10)).isEqualTo(3);
    assertThat(target("a", Set.of("a"), 10)).isEqualTo(10);
    assertThat(target("d", Set.of("a", "b", "c", "d"), 3)).isZero();
  }

  @Test
  void shouldSpreadEachKindAndKeepTheTotalsEven() {
    Set<String> live = Set.of("a", "b", "c");
    Map<String, List<String>> sixKindsOfTwo = new java.util.TreeMap<>();
    for (String kind : List.of("deepsearch", "fork", "noop", "seo", "seo_meta", "zip")) {
      sixKindsOfTwo.put(kind, List.of(kind + "-0", kind + "-1"));
    }
    Map<String, Integer> totals = new HashMap<>();
    for (String self : live) {
      Map<String, Integer> targets = ShardBalancer.targetsOf(self, live, sixKindsOfTwo);
      assertThat(targets.values()).allMatch(t -> t <= 1);
      totals.put(self, targets.values().stream().mapToInt(Integer::intValue).sum());
    }
    assertThat(totals.values()).containsExactly(4, 4, 4);
    for (String kind : sixKindsOfTwo.keySet()) {
      int sum = 0;
      for (String self : live) {
        sum += ShardBalancer.targetsOf(self, live, sixKindsOfTwo).get(kind);
      }
      assertThat(sum).as("every shard of " + kind + " has an owner").isEqualTo(2);
    }
    Map<String, List<String>> threeOfOne = Map.of("zip", List.of("zip-0", "zip-1", "zip-2"));
    for (String self : live) {
      assertThat(ShardBalancer.targetsOf(self, live, threeOfOne).get("zip"))
          .as("a kind of three shards on three replicas: one each")
          .isEqualTo(1);
    }
  }

  @Test
  void shouldSpreadTheShardsEvenlyAndMoveThemWhenReplicasComeAndGo() throws Exception {
    Replica a = replica("replica-a");
    Replica b = replica("replica-b");
    Replica c = replica("replica-c");

    Map<String, Integer> spread = settle(List.of(a, b, c));
    assertThat(spread.values()).containsExactlyInAnyOrder(4, 3, 3);

    Replica d = replica("replica-d");
    spread = settle(List.of(a, b, c, d));
    assertThat(spread.values()).containsExactlyInAnyOrder(3, 3, 2, 2);

    b.locks.releaseAll(); // it stops: its sessions, and so its membership, end with it
    replicas.remove(b);
    spread = settle(List.of(a, c, d));
    assertThat(spread.values()).containsExactlyInAnyOrder(4, 3, 3);
  }

  @Test
  void shouldHoldNoShardWhileAnOlderReleaseHoldsTheUnshardedLock() throws Exception {
    Replica a = replica("replica-a");
    Replica b = replica("replica-b");
    assertThat(settle(List.of(a, b)).values()).containsExactlyInAnyOrder(5, 5);

    // A replica of a release before shards takes the unsharded lock: it writes the epoch and
    // leaves shard_aware_epoch alone, and its session holds the advisory key.
    try (Connection old = DriverManager.getConnection(url, "postgres", "")) {
      try (Statement s = old.createStatement()) {
        s.execute(
            "INSERT INTO job_owner_epochs (lock_name, epoch, holder, taken_at)"
                + " VALUES ('"
                + base
                + "', nextval('jobs_owner_epoch_seq'), 'old-pod', now())");
        s.execute("SELECT pg_advisory_lock(" + PostgresOwnerLock.keyOf(base) + ")");
      }
      assertThat(OlderRelease.postgres(db.dataSource(), base).holder()).contains("old-pod");
      for (int round = 0; round < 5; round++) {
        a.balancer.balance();
        b.balancer.balance();
        Thread.sleep(150);
      }
      assertThat(a.owned() + b.owned()).as("shards held beside the older release").isZero();
    }
    // Its session ends: the balance resumes.
    assertThat(OlderRelease.postgres(db.dataSource(), base).holder()).isEmpty();
    assertThat(settle(List.of(a, b)).values()).containsExactlyInAnyOrder(5, 5);

    // A session of this release holding the key (one that has just taken the lock and not yet
    // written its epoch) is no older release.
    try (Connection fresh = DriverManager.getConnection(url, "postgres", "");
        Statement s = fresh.createStatement()) {
      s.execute("SET application_name = 'async-jobs:abcdef:replica-z'");
      s.execute("SELECT pg_advisory_lock(" + PostgresOwnerLock.keyOf(base) + ")");
      assertThat(OlderRelease.postgres(db.dataSource(), base).holder()).isEmpty();
    }
    // A holding of this release (shard-aware), even while its key is held, holds nothing back.
    db.update("UPDATE job_owner_epochs SET shard_aware_epoch = epoch WHERE lock_name = ?", base);
    try (Connection now = DriverManager.getConnection(url, "postgres", "");
        Statement s = now.createStatement()) {
      s.execute("SELECT pg_advisory_lock(" + PostgresOwnerLock.keyOf(base) + ")");
      assertThat(OlderRelease.postgres(db.dataSource(), base).holder()).isEmpty();
    }
  }

  /** The target of {@code self} in one kind of {@code n} shards. */
  private static int target(String self, Set<String> live, int n) {
    List<String> keys = IntStream.range(0, n).mapToObj(i -> "k-" + i).toList();
    return ShardBalancer.targetsOf(self, live, Map.of("k", keys)).get("k");
  }

  /**
   * Runs rounds on every replica until each shard is owned by exactly one and no round changes
   * anything; returns how many shards each owns.
   */
  private Map<String, Integer> settle(List<Replica> group) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    Map<String, Integer> last = null;
    int stable = 0;
    while (System.nanoTime() < deadline) {
      for (Replica r : group) {
        r.balancer.balance();
      }
      Thread.sleep(150); // the locks attempt every 50 ms
      Map<String, Integer> now = new HashMap<>();
      boolean once = true;
      for (String shard : shards) {
        int owners = 0;
        for (Replica r : group) {
          if (r.locks.forShard(shard).trust() != Trust.NONE) {
            owners++;
          }
        }
        once &= owners == 1;
      }
      for (Replica r : group) {
        now.put(r.name, r.owned());
      }
      stable = once && now.equals(last) ? stable + 1 : 0;
      last = now;
      if (stable >= 3) {
        for (Replica r : group) {
          assertThat(r.owned())
              .isLessThanOrEqualTo((shards.size() + group.size() - 1) / group.size());
        }
        return now;
      }
    }
    throw new AssertionError("the shards did not settle within 30 s: " + last);
  }

  private Replica replica(String name) {
    Replica r = new Replica(name);
    replicas.add(r);
    return r;
  }

  private final class Replica {
    final String name;
    final OwnerLocks locks;
    final ShardBalancer balancer;

    Replica(String name) {
      this.name = name;
      this.locks =
          new OwnerLocks(
              name,
              key -> {
                PostgresOwnerLock lock =
                    new PostgresOwnerLock(
                        url,
                        "postgres",
                        "",
                        base,
                        base + "-" + key,
                        name,
                        Duration.ofSeconds(10),
                        Duration.ofMillis(50),
                        Duration.ofSeconds(1),
                        LockMetrics.none());
                lock.compete(false);
                lock.start();
                return lock;
              });
      shards.forEach(locks::forShard); // every session open: the replica is a member
      PostgresMembers members = new PostgresMembers(db.dataSource(), base, name);
      this.balancer =
          new ShardBalancer(
              members,
              locks,
              () -> replicas.forEach(r -> r.locks.all().values().forEach(OwnerLock::attemptSoon)),
              () -> Map.of("kind", shards),
              (shard, whileDrained) -> {
                whileDrained.run();
                return 0;
              },
              OlderRelease.postgres(db.dataSource(), base));
    }

    int owned() {
      int n = 0;
      for (String shard : shards) {
        if (locks.forShard(shard).trust() != Trust.NONE) {
          n++;
        }
      }
      return n;
    }
  }
}
