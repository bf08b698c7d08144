package io.asyncjobs.failover;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.asyncjobs.auth.DevKeysConfigSourceFactory;
import io.asyncjobs.testing.MockApiServer;
import io.asyncjobs.testing.ServiceProcess;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.smallrye.jwt.build.Jwt;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The upgrade-and-rollback run of bench/upgrade.sh (docs/benchmarks.md, "Upgrade and rollback"):
 * two replicas of the previous release (the quarkus-run.jar named by {@code upgrade.previous.jar})
 * on a fresh database, under load, replaced one at a time by this build as our Deployment rolls out
 * (maxSurge 1, maxUnavailable 0: start one, wait until ready, SIGTERM one old), then rolled back
 * the same way, as {@code kubectl rollout undo} does. Judged by counts: no job lost or run twice,
 * every acknowledged enqueue done, no replica unready after it was ready, none crashed, every step
 * of both rollouts taken. Runs only when the script names the previous release.
 */
@EnabledIfSystemProperty(named = "upgrade.previous.jar", matches = ".+")
class UpgradeRollbackIT {

  static final Path REPORT = Path.of("target", "upgrade", "report.txt");

  /** Jobs queued in the table: half before the upgrade, half before the rollback. */
  private static final int QUEUED = 1_000;

  /** Each queued job's sleep: each half keeps the owner's 4 slots busy for about 25 s. */
  private static final long QUEUED_SLEEP_MS = 200;

  /** The Deployment's terminationGracePeriodSeconds (40), and a margin. */
  private static final Duration STOP_WITHIN = Duration.ofSeconds(45);

  private static final Duration READY_WITHIN = Duration.ofSeconds(120);
  private static final Duration DRAIN_WITHIN = Duration.ofSeconds(120);

  /** How long the rolled-out release runs before the rollback. */
  private static final Duration SETTLE = Duration.ofSeconds(10);

  private static final String ISSUER = DevKeysConfigSourceFactory.DEV_ISSUER;

  private static Path publicKey;
  private static String token;

  @BeforeAll
  static void keys() throws Exception {
    KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
    generator.initialize(2048);
    KeyPair pair = generator.generateKeyPair();
    Path dir = Files.createDirectories(Path.of("target", "upgrade"));
    publicKey = dir.resolve("public.pem").toAbsolutePath();
    Files.writeString(
        publicKey,
        "-----BEGIN PUBLIC KEY-----\n"
            + Base64.getMimeEncoder(64, new byte[] {'\n'})
                .encodeToString(pair.getPublic().getEncoded())
            + "\n-----END PUBLIC KEY-----\n");
    token =
        Jwt.issuer(ISSUER)
            .subject("upgrade-client")
            .groups(Set.of("user"))
            .claim("owner_kind", "user")
            .expiresIn(3600)
            .sign(pair.getPrivate());
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgres", "kubernetes"})
  void shouldUpgradeAndRollBackWithoutLosingAJob(String mode) throws Exception {
    assumeTrue(
        List.of(System.getProperty("upgrade.modes", "postgres,kubernetes").split(","))
            .contains(mode),
        "upgrade.modes leaves out " + mode);
    KubernetesMockServer apiServer = mode.equals("kubernetes") ? MockApiServer.start() : null;
    try (FaultCluster cluster = new FaultCluster()) {
      Map<String, String> env = cluster.environment();
      env.put("MP_JWT_VERIFY_ISSUER", ISSUER);
      env.put("MP_JWT_VERIFY_PUBLICKEY_LOCATION", publicKey.toString());
      if (apiServer == null) {
        env.put("JOBS_LOCK_MODE", "postgres");
      } else {
        env.putAll(MockApiServer.leaseEnvironment(apiServer));
      }
      Rollout rollout = new Rollout(mode, cluster, env);
      String report = rollout.run();
      System.out.print(report);
      Files.createDirectories(REPORT.getParent());
      Files.writeString(REPORT, report, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
      assertThat(rollout.failures).as(mode + ": what went wrong").isEmpty();
    } finally {
      if (apiServer != null) {
        apiServer.destroy();
      }
    }
  }

  /** One run in one lock mode: the replicas, the load, the steps taken and the counts. */
  private static final class Rollout {

    private final String mode;
    private final FaultCluster cluster;
    private final Map<String, String> env;
    private final List<String> previous =
        ServiceProcess.jarCommand(Path.of(System.getProperty("upgrade.previous.jar")));
    private final List<String> head;
    private final List<String> steps = new ArrayList<>();
    private final List<String> crashes = new ArrayList<>();
    private final List<String> exits = new ArrayList<>();
    final List<String> failures = new ArrayList<>();
    private final long started = System.nanoTime();
    private final ReadinessWatch watch = new ReadinessWatch(Duration.ofMillis(500), 2);
    private EnqueueLoad load;
    private int stepsTaken;

    Rollout(String mode, FaultCluster cluster, Map<String, String> env) throws Exception {
      this.mode = mode;
      this.cluster = cluster;
      this.env = env;
      this.head = ServiceProcess.command();
    }

    String run() throws Exception {
      try (watch) {
        return runWatched();
      }
    }

    private String runWatched() throws Exception {
      try (EnqueueLoad load = new EnqueueLoad(token, 2, Duration.ofMillis(50), 20)) {
        this.load = load;
        List<ServiceProcess> serving = new ArrayList<>();
        ServiceProcess a = cluster.start(mode + "-old-1", env, previous);
        ServiceProcess b = cluster.start(mode + "-old-2", env, previous);
        for (ServiceProcess replica : List.of(a, b)) {
          if (!awaitReady(replica)) {
            failures.add("the previous release did not start on a fresh database");
            return report();
          }
          serving.add(replica);
        }
        step("previous release: 2 replicas ready; HTTP enqueues start");
        cluster.enqueue(QUEUED / 2, QUEUED_SLEEP_MS);
        step((QUEUED / 2) + " jobs queued");
        Thread.sleep(3_000);

        List<ServiceProcess> upgraded = roll(serving, head, "new", "upgrade");
        if (upgraded != null) {
          Thread.sleep(SETTLE.toMillis());
          cluster.enqueue(QUEUED / 2, QUEUED_SLEEP_MS);
          step((QUEUED / 2) + " jobs queued");
          Thread.sleep(3_000);
          roll(upgraded, previous, "back", "rollback");
          Thread.sleep(5_000);
        }
      }
      step("HTTP enqueues stopped");
      try {
        cluster.awaitDrained(DRAIN_WITHIN);
        step("every job finished");
      } catch (AssertionError e) {
        step("jobs still pending or running after " + DRAIN_WITHIN.toSeconds() + " s");
      }
      return report();
    }

    /**
     * Replaces {@code from} one replica at a time with replicas of {@code command}; returns them,
     * or null when one did not get ready (the rollout stalls there, the rest keep running).
     */
    private List<ServiceProcess> roll(
        List<ServiceProcess> from, List<String> command, String name, String what)
        throws Exception {
      List<ServiceProcess> next = new ArrayList<>();
      for (int i = 0; i < from.size(); i++) {
        ServiceProcess replica = cluster.start(mode + "-" + name + "-" + (i + 1), env, command);
        if (!awaitReady(replica)) {
          step(what + " stalled: " + replica.name + " never got ready");
          failures.add(what + " stalled at " + replica.name);
          return null;
        }
        next.add(replica);
        stepsTaken++;
        step(what + ": " + replica.name + " ready");
        stop(from.get(i));
        step(what + ": " + from.get(i).name + " stopped (SIGTERM)");
      }
      return next;
    }

    private boolean awaitReady(ServiceProcess replica) throws Exception {
      try {
        replica.awaitReady(READY_WITHIN);
      } catch (IllegalStateException e) {
        crashes.add(e.getMessage() + " (log " + replica.log + ")");
        replica.close();
        return false;
      }
      watch.ready(replica);
      load.add(replica);
      return true;
    }

    private void stop(ServiceProcess replica) throws Exception {
      load.remove(replica);
      watch.stopping(replica);
      replica.terminate();
      if (!replica.awaitExit(STOP_WITHIN)) {
        crashes.add(
            replica.name + " still running " + STOP_WITHIN.toSeconds() + " s after SIGTERM");
        replica.close();
        return;
      }
      int code = replica.exitValue();
      exits.add(replica.name + "=" + code);
      // 143 is a JVM ended by SIGTERM after its shutdown hooks ran.
      if (code != 0 && code != 143) {
        crashes.add(replica.name + " exited " + code + " after SIGTERM");
      }
    }

    private void step(String what) {
      steps.add(String.format("%5d  %s", elapsed(), what));
    }

    private long elapsed() {
      return Duration.ofNanos(System.nanoTime() - started).toSeconds();
    }

    private String report() throws Exception {
      List<UUID> acknowledged = load.acknowledged();
      long queued =
          cluster.count(
              "SELECT count(*) FROM jobs WHERE payload->>'sleep_ms' = '" + QUEUED_SLEEP_MS + "'");
      long notDone = cluster.count("SELECT count(*) FROM jobs WHERE status <> 'done'");
      long failed = cluster.count("SELECT count(*) FROM jobs WHERE status = 'failed'");
      long ackNotDone = acknowledgedNotDone(acknowledged);
      long missing = acknowledgedMissing(acknowledged);
      long lost = notDone + missing;
      long ranTwice =
          cluster.count(
              "SELECT count(*) FROM (SELECT uid FROM noop_executions GROUP BY uid"
                  + " HAVING count(*) > 1) twice");
      crashes.addAll(watch.died());
      List<String> unready = watch.unready();
      check(lost == 0, lost + " jobs lost");
      check(ranTwice == 0, ranTwice + " jobs run twice");
      check(ackNotDone == 0, ackNotDone + " acknowledged enqueues not done");
      check(unready.isEmpty(), "unready after ready: " + unready);
      check(crashes.isEmpty(), "crashed: " + crashes);
      check(stepsTaken == 4, stepsTaken + " of 4 rollout steps taken");
      check(!acknowledged.isEmpty(), "no enqueue was acknowledged");

      StringBuilder out = new StringBuilder();
      out.append(
          String.format(
              "%nlock mode %s: %s -> %s -> %s%n",
              mode,
              System.getProperty("upgrade.previous.name", "previous"),
              System.getProperty("upgrade.head.name", "HEAD"),
              System.getProperty("upgrade.previous.name", "previous")));
      out.append("    s  step\n");
      steps.forEach(s -> out.append(s).append('\n'));
      out.append(String.format("  %-44s | %7s | %s%n", "count", "value", "allowed"));
      row(out, "jobs queued in the table", queued, "");
      row(out, "HTTP enqueues sent", load.sent(), "");
      row(out, "HTTP enqueues acknowledged (202)", acknowledged.size(), "");
      row(out, "HTTP enqueues not acknowledged", load.refused(), "");
      row(out, "lost (not done at the end)", lost, "0");
      row(out, "  of which failed", failed, "");
      row(out, "run twice", ranTwice, "0");
      row(out, "acknowledged enqueues not done", ackNotDone, "0");
      row(out, "replicas unready after ready", unready.size(), "0");
      row(out, "replicas crashed or refused to start", crashes.size(), "0");
      row(out, "rollout steps taken (upgrade 2, rollback 2)", stepsTaken, "4");
      if (notDone > 0) {
        out.append("  not done at the end, by status and kind: ")
            .append(
                cluster.lines(
                    "SELECT status, kind, count(*) AS jobs, min(created_at) AS first_created,"
                        + " max(created_at) AS last_created FROM jobs WHERE status <> 'done'"
                        + " GROUP BY status, kind"))
            .append('\n');
        System.out.println("upgrade: jobs not done:\n" + cluster.jobsOfInterest());
      }
      out.append("  exit codes after SIGTERM: ").append(String.join(" ", exits)).append('\n');
      for (String crash : crashes) {
        out.append("  crashed: ").append(crash).append('\n');
      }
      for (String replica : unready) {
        out.append("  unready: ").append(replica).append('\n');
      }
      out.append(
          String.format(
              "  %s: %s in %d s%n",
              mode, failures.isEmpty() ? "PASS" : "FAIL " + failures, elapsed()));
      return out.toString();
    }

    private void check(boolean ok, String failure) {
      if (!ok) {
        failures.add(failure);
      }
    }

    private long acknowledgedNotDone(List<UUID> uids) throws Exception {
      return scalar(
          "SELECT count(*) FROM unnest(?::uuid[]) a(uid)"
              + " WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE j.uid = a.uid AND j.status = 'done')",
          uids);
    }

    private long acknowledgedMissing(List<UUID> uids) throws Exception {
      return scalar(
          "SELECT count(*) FROM unnest(?::uuid[]) a(uid)"
              + " WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE j.uid = a.uid)",
          uids);
    }

    private long scalar(String sql, List<UUID> uids) throws Exception {
      try (Connection c = cluster.connect();
          PreparedStatement ps = c.prepareStatement(sql)) {
        ps.setArray(1, c.createArrayOf("uuid", uids.toArray()));
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getLong(1);
        }
      }
    }

    private static void row(StringBuilder out, String what, long value, String allowed) {
      out.append(String.format("  %-44s | %7d | %s%n", what, value, allowed));
    }
  }
}
