package io.asyncjobs.failover;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.testing.ServiceProcess;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two packaged replicas on the PostgreSQL advisory lock while the database misbehaves: every
 * session terminated three times mid-drain, the server restarted, the server down for 30 s, the
 * owner's lock session killed under sixteen long jobs, and sessions killed while jobs wait claimed
 * ahead of the threads. Each run counts what happened to every job (see {@link Effects}) and adds a
 * row to target/failover/faults.md.
 */
class DatabaseFaultsIT {

  private FaultCluster cluster;

  @BeforeEach
  void startDatabase() throws Exception {
    cluster = new FaultCluster();
  }

  @AfterEach
  void stopAll() throws Exception {
    cluster.close();
  }

  @Test
  void shouldLoseFailAndOverlapNothingWhenEverySessionIsTerminatedMidDrain() throws Exception {
    startReplicas("sessions", Map.of());
    cluster.enqueue(3_000, 10);
    cluster.awaitDone(300, Duration.ofSeconds(60));

    terminateSessions(3, Duration.ofMillis(1_500));
    Duration recovery = progressAgain();
    cluster.awaitDrained(Duration.ofSeconds(120));

    assertClean(cluster.report("sessions terminated 3 times, 1.5 s apart", ms(recovery)));
  }

  @Test
  void shouldLoseFailAndOverlapNothingWhenSessionsDieWhileOutcomesAreWrittenBesideClaims()
      throws Exception {
    // Jobs that take no time on 16 threads, claimed ahead as shipped: a wake-up carries a hundred
    // outcomes or more, written on a second connection beside its claim, so a termination may cut
    // the write, the claim, both, or a combined statement. EngineFaultsTest fails each half alone.
    ServiceProcess[] pair =
        startReplicas(
            "beside",
            Map.of(
                "JOBS_SERVICES_NOOP_MAX_CONCURRENT",
                "16",
                "QUARKUS_LOG_CATEGORY__IO_ASYNCJOBS_ENGINE__LEVEL",
                "DEBUG"));
    cluster.enqueue(12_000, 0);
    cluster.awaitDone(1_000, Duration.ofSeconds(60));

    terminateSessions(3, Duration.ofMillis(400));
    Duration recovery = progressAgain();
    cluster.awaitDrained(Duration.ofSeconds(120));

    assertClean(
        cluster.report(
            "sessions terminated 3 times while outcomes are written beside claims", ms(recovery)));
    long besides = 0;
    for (ServiceProcess replica : pair) {
      try (var lines = Files.lines(replica.log)) {
        besides += lines.filter(l -> l.contains("outcomes beside a claim")).count();
      }
    }
    assertThat(besides).as("wake-ups that wrote their outcomes beside their claims").isPositive();
  }

  @Test
  void shouldRecoverByItselfWhenPostgresRestartsMidDrain() throws Exception {
    startReplicas("restart", Map.of());
    cluster.enqueue(3_000, 10);
    cluster.awaitDone(300, Duration.ofSeconds(60));

    cluster.fault();
    cluster.stopDatabase();
    cluster.startDatabase();
    Duration owner =
        FaultCluster.await(() -> cluster.owners().size() == 1, Duration.ofSeconds(30), "an owner");
    Duration recovery = progressAgain();
    cluster.awaitDrained(Duration.ofSeconds(120));

    assertClean(
        cluster.report(
            "PostgreSQL restarted", "owner " + ms(owner) + ", jobs finishing " + ms(recovery)));
  }

  @Test
  void shouldBeUnreadyWhileTheDatabaseIsDownAndReadyWithinFiveSecondsOfItsReturn()
      throws Exception {
    ServiceProcess[] pair = startReplicas("down", Map.of());
    cluster.enqueue(2_000, 10);
    cluster.awaitDone(200, Duration.ofSeconds(60));

    cluster.fault();
    long stoppedAt = System.nanoTime();
    cluster.stopDatabase();
    // Unready: a 503, or no answer within the probe's patience while the check waits for a
    // connection that cannot be made.
    FaultCluster.await(
        () -> pair[0].readinessStatus() != 200 && pair[1].readinessStatus() != 200,
        Duration.ofSeconds(10),
        "both replicas unready while the database is down");
    Thread.sleep(Math.max(0, Duration.ofSeconds(30).toMillis() - millisSince(stoppedAt)));
    assertThat(pair[0].isAlive() && pair[1].isAlive()).as("nobody restarted").isTrue();
    cluster.startDatabase();
    Duration ready =
        FaultCluster.await(
            () -> pair[0].readinessStatus() == 200 && pair[1].readinessStatus() == 200,
            Duration.ofSeconds(15),
            "both replicas ready again");
    Duration recovery = progressAgain();
    cluster.awaitDrained(Duration.ofSeconds(120));

    assertThat(ready).isLessThanOrEqualTo(Duration.ofSeconds(5));
    assertClean(
        cluster.report(
            "PostgreSQL down for 30 s",
            "ready " + ms(ready) + ", jobs finishing " + ms(recovery) + " after its return"));
  }

  @Test
  void shouldNeverRunAJobTwiceAtOnceWhenTheOwnersLockSessionIsKilled() throws Exception {
    startReplicas("locksession", Map.of("JOBS_SERVICES_NOOP_MAX_CONCURRENT", "16"));
    cluster.enqueue(16, 2_000);
    FaultCluster.await(
        () -> cluster.count("SELECT count(*) FROM noop_executions WHERE ended_at IS NULL") == 16,
        Duration.ofSeconds(30),
        "sixteen jobs running");

    assertThat(cluster.terminateLockSession()).isEqualTo(1);
    Duration owner =
        FaultCluster.await(() -> cluster.owners().size() == 1, Duration.ofSeconds(30), "an owner");
    cluster.awaitDrained(Duration.ofSeconds(60));

    Effects effects =
        cluster.report("lock session killed under 16 running 2 s jobs", "owner " + ms(owner));
    assertClean(effects);
    assertThat(effects.ranTwice()).isLessThanOrEqualTo(16);
  }

  @Test
  void shouldLoseFailAndOverlapNothingWhenSessionsDieWhileJobsWaitClaimedAhead() throws Exception {
    // 10 ms jobs on 4 threads with a 200 ms window: some 80 jobs wait claimed for a thread.
    startReplicas("ahead", Map.of("JOBS_SERVICES_NOOP_CLAIM_AHEAD", "200ms"));
    cluster.enqueue(3_000, 10);
    FaultCluster.await(
        () -> cluster.count("SELECT count(*) FROM jobs WHERE status = 'running'") > 8,
        Duration.ofSeconds(60),
        "jobs claimed ahead of the four threads");

    assertThat(cluster.terminateSessions()).isPositive();
    Thread.sleep(1_500);
    cluster.terminateLockSession();
    FaultCluster.await(() -> cluster.owners().size() == 1, Duration.ofSeconds(30), "an owner");
    Duration recovery = progressAgain();
    cluster.awaitDrained(Duration.ofSeconds(120));

    assertClean(
        cluster.report(
            "claim-ahead 200 ms: sessions terminated, then the lock session killed", ms(recovery)));
  }

  private ServiceProcess[] startReplicas(String scenario, Map<String, String> extra)
      throws Exception {
    Map<String, String> env = cluster.environment();
    env.put("JOBS_LOCK_MODE", "postgres");
    env.putAll(extra);
    ServiceProcess a = cluster.start("db-" + scenario + "-a", env);
    ServiceProcess b = cluster.start("db-" + scenario + "-b", env);
    cluster.awaitReadyAndOwner();
    return new ServiceProcess[] {a, b};
  }

  /** Terminates every application session {@code times} times, {@code apart} apart. */
  private void terminateSessions(int times, Duration apart) throws Exception {
    for (int i = 0; i < times; i++) {
      assertThat(cluster.terminateSessions()).isPositive();
      Thread.sleep(apart.toMillis());
    }
  }

  /** How long after now jobs are being finished again (ten more done). */
  private Duration progressAgain() throws InterruptedException {
    long doneNow = cluster.count("SELECT count(*) FROM jobs WHERE status = 'done'");
    return FaultCluster.await(
        () -> cluster.count("SELECT count(*) FROM jobs WHERE status = 'done'") >= doneNow + 10,
        Duration.ofSeconds(60),
        "jobs finishing again");
  }

  /** 0 lost, 0 failed, 0 overlapping, and no more duplicates than jobs running at a fault. */
  static void assertClean(Effects effects) {
    assertThat(effects.lost()).as("lost").isZero();
    assertThat(effects.failed()).as("failed").isZero();
    assertThat(effects.overlapping()).as("executions of one job overlapping").isZero();
    assertThat(effects.unknownEnds()).as("executions without a recorded end").isZero();
    assertThat(effects.ranTwice())
        .as("ran twice, at most the jobs running when a fault struck")
        .isLessThanOrEqualTo(effects.runningAtFaults());
  }

  static String ms(Duration d) {
    return d.toMillis() + " ms";
  }

  static long millisSince(long sinceNanos) {
    return Duration.ofNanos(System.nanoTime() - sinceNanos).toMillis();
  }
}
