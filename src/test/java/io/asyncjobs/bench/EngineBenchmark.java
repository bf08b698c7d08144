package io.asyncjobs.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.agroal.api.AgroalDataSource;
import io.asyncjobs.bench.peers.PeerHarness;
import io.asyncjobs.config.JobsConfig;
import io.asyncjobs.config.Shards;
import io.asyncjobs.engine.JobService;
import io.asyncjobs.engine.ManualServices;
import io.asyncjobs.engine.ServiceManager;
import io.asyncjobs.kinds.noop.NoopService;
import io.asyncjobs.lock.Epochs;
import io.asyncjobs.operations.ServicePauses;
import io.asyncjobs.queue.Completion;
import io.asyncjobs.queue.EnqueueRequest;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobClaims;
import io.asyncjobs.queue.JobOutcomes;
import io.asyncjobs.queue.JobQueue;
import io.asyncjobs.queue.Owner;
import io.asyncjobs.testing.Database;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;
import org.junit.jupiter.api.Test;

/**
 * The engine benchmark behind {@code bench/run.sh engine}. Not part of {@code ./mvnw verify}: the
 * script starts a durable PostgreSQL, measures the pgbench reference on it, and runs this against
 * the same server. Figures go to the JSON-lines file named by {@code bench.output}.
 *
 * <p>With {@code bench.mode=peers} it is instead our side of {@code bench/run.sh peers}: it serves
 * the rounds that bench/peers.sh asks for through the control folder {@code bench.control}, with
 * the measures of {@link PeerHarness}, until told to quit.
 */
@QuarkusTest
@TestProfile(EngineBenchmark.Profile.class)
class EngineBenchmark {

  private static final int JOBS = 10_000;
  private static final int BATCH = 1_000;
  private static final int PICKUPS = 200;
  private static final String PEERS_KIND = "bench_peers";
  private static final String PER_THREAD_KIND = "bench_drain_per_thread";
  private static final int SERIAL_WARM_UP = 15;
  private static final int WARM_DRAINS_QUIET = 3;
  private static final int WARM_DRAINS_MAX = 40;
  private static final String OWNED_HERE_KIND = "bench_enqueue_here";
  private static final Owner BENCH = new Owner("user", "bench");

  @Inject JobQueue queue;
  @Inject JobClaims claims;
  @Inject JobOutcomes outcomes;
  @Inject JobsConfig config;
  @Inject ServiceManager manager;
  @Inject ServicePauses pauses;
  @Inject Database db;
  @Inject AgroalDataSource dataSource;

  private final List<Map<String, Object>> rows = new ArrayList<>();

  @Test
  void measure() throws Exception {
    if ("peers".equals(System.getProperty("bench.mode"))) {
      new PeerHarness("ours", new Ours(), PeerHarness.Settings.fromEnvironment(), 50)
          .serve(
              Path.of(System.getProperty("bench.control")),
              Path.of(System.getProperty("bench.output")),
              Duration.ofMinutes(20));
      return;
    }
    if ("enqueue".equals(System.getProperty("bench.mode"))) {
      measureEnqueueOnly();
      return;
    }
    if ("serial".equals(System.getProperty("bench.mode"))) {
      measureStatementsSerialOnly();
      return;
    }
    double reference = Double.parseDouble(System.getProperty("bench.reference-tps", "0"));
    record("pgbench_insert_1_client", reference, "tps", null);
    db.clearJobs();
    warmUp();

    long t0 = System.nanoTime();
    for (int i = 0; i < JOBS; i++) {
      queue.enqueue("bench_drain", Map.of("i", i), "user", "bench", null);
    }
    double single = JOBS / seconds(t0);
    record("enqueue_one_at_a_time", single, "jobs/s", single / reference);

    t0 = System.nanoTime();
    for (int b = 0; b < JOBS / BATCH; b++) {
      queue.enqueue(newJobs("bench_batch", BATCH));
    }
    double batched = JOBS / seconds(t0);
    record("enqueue_batches_of_1000", batched, "jobs/s", batched / reference);
    db.update("DELETE FROM jobs WHERE kind = 'bench_batch'");

    // Drain with the shipped defaults (claims 20 ms ahead of the free threads): the 10,000 pending
    // bench_drain jobs, from the moment their service starts. That first drain of the process is
    // reported on its own: it shows a replica just started, while the JIT compiler works through
    // it. Then drains on fresh kinds until the compiler has settled (warmDrains), and three
    // measured, the median of the three: a replica that has run for a while. Then the drain that
    // claims only for free threads (claim-ahead 0s), the default before.
    double first = drainAll("bench_drain");
    record("drain_noop_first_of_process", first, "jobs/s", first / reference);
    List<Double> warm = new ArrayList<>();
    boolean settled = warmDrains(warm);
    settleTable();
    List<Double> drains = drainFreshKinds("bench_drain_", 3);
    System.out.println(
        "drain first " + first + ", warm-up " + warm + ", then rounds, jobs/s: " + drains);
    record("drain_noop_warm_up_rounds", warm.size(), "drains", null);
    record("drain_noop_warm_up_settled", settled ? 1 : 0, "yes=1", null);
    Collections.sort(drains);
    double drained = drains.get(1);
    record("drain_noop_max_concurrent_10", drained, "jobs/s", drained / reference);
    queue.enqueue(newJobs(PER_THREAD_KIND, JOBS));
    double perThread = drainAll(PER_THREAD_KIND);
    record(
        "drain_noop_max_concurrent_10_no_claim_ahead", perThread, "jobs/s", perThread / reference);

    // Pickup latency: single enqueues 20 ms apart, enqueue call to process start.
    PickupService pickup = new PickupService();
    manager.register(pickup);
    for (int i = 0; i < 20; i++) {
      pickup.enqueueAndAwait(queue, -1);
    }
    List<Double> fromCall = new ArrayList<>();
    List<Double> fromCommit = new ArrayList<>();
    for (int i = 0; i < PICKUPS; i++) {
      double[] latency = pickup.enqueueAndAwait(queue, i);
      fromCall.add(latency[0]);
      fromCommit.add(latency[1]);
      Thread.sleep(20);
    }
    Collections.sort(fromCall);
    Collections.sort(fromCommit);
    record("pickup_p50_from_enqueue_call", percentile(fromCall, 50), "ms", null);
    record("pickup_p99_from_enqueue_call", percentile(fromCall, 99), "ms", null);
    record("pickup_p50_from_commit", percentile(fromCommit, 50), "ms", null);
    record("pickup_p99_from_commit", percentile(fromCommit, 99), "ms", null);

    // The same through NOTIFY alone, as when another replica enqueues: a plain insert with the
    // notification, bypassing this process's in-memory wake-up.
    List<Double> viaNotify = new ArrayList<>();
    for (int i = 0; i < PICKUPS; i++) {
      viaNotify.add(pickup.insertElsewhereAndAwait(db, PICKUPS + i));
      Thread.sleep(20);
    }
    Collections.sort(viaNotify);
    record("pickup_p50_via_notify_from_commit", percentile(viaNotify, 50), "ms", null);
    record("pickup_p99_via_notify_from_commit", percentile(viaNotify, 99), "ms", null);

    // Last, so that it changes nothing the measures above ran on: the drain's two statements at
    // the size claims ahead reach, one after the other (a reference, not a ceiling); the ratio is
    // the drain with claims ahead over it.
    settleTable();
    double serial = statementsSerialMedian(0); // the drains above warmed the JIT compiler
    record(
        "drain_statements_serial_cycles_of_" + config.claimAheadMax(),
        serial,
        "jobs/s",
        drained / serial);

    write();
    assertThat(rows).isNotEmpty();
  }

  /**
   * The enqueue suite's in-process side: the same enqueues as its HTTP side, one at a time and in
   * batches of 1,000, each for {@code bench.seconds} after {@code bench.warmup-seconds} of each
   * unmeasured, on a table emptied before each; no job is processed meanwhile (no service of the
   * kind is registered), as the app under test processes none (lock mode none). One at a time is
   * also measured for a kind this replica owns, as a replica running the kind enqueues (its service
   * registered and paused, so that nothing is processed).
   */
  private void measureEnqueueOnly() throws Exception {
    double seconds = Double.parseDouble(System.getProperty("bench.seconds", "15"));
    double warmUp = Double.parseDouble(System.getProperty("bench.warmup-seconds", "20"));
    db.update("CREATE TABLE IF NOT EXISTS bench_ref (id uuid PRIMARY KEY, body text NOT NULL)");
    try {
      ownKindHere();
      for (boolean measured : new boolean[] {false, true}) {
        enqueueRound(measured ? seconds : warmUp, measured);
      }
    } finally {
      // The kind is resumed and gone even when the run fails: a later run registers it again.
      pauses.resume(OWNED_HERE_KIND);
      ManualServices.unregister(manager, OWNED_HERE_KIND);
    }
    db.update("TRUNCATE jobs, job_finished_minutes");
    db.update("DROP TABLE bench_ref");
    write();
  }

  /**
   * Registers {@value #OWNED_HERE_KIND}, paused so that nothing is processed, and waits until this
   * replica owns its shard and may claim.
   */
  private void ownKindHere() throws InterruptedException {
    JobService ownedHere = new DrainNoopService(OWNED_HERE_KIND);
    manager.register(ownedHere);
    pauses.pause(OWNED_HERE_KIND, "bench", "enqueues only");
    for (int i = 0; i < 1_000 && !manager.wakesHere(OWNED_HERE_KIND, Shards.ALL); i++) {
      ownedHere.runOnce(); // takes the lock, and reads the pause
      Thread.sleep(10);
    }
    assertThat(manager.wakesHere(OWNED_HERE_KIND, Shards.ALL))
        .as("this replica owns " + OWNED_HERE_KIND)
        .isTrue();
  }

  /**
   * One round of the enqueue suite's in-process side, {@code bound} seconds of each kind of
   * enqueue, on tables emptied first; records its figures when {@code measured}.
   */
  private void enqueueRound(double bound, boolean measured) throws Exception {
    db.update("TRUNCATE jobs, job_finished_minutes, bench_ref");
    // One at a time, in half-second slices that alternate with a bare insert of one row on a
    // connection of the same pool: a commit's flush here waits on a shared host whose latency
    // moves within minutes, so a reference taken once at another time is not the same run.
    Slices single = new Slices();
    Slices here = new Slices();
    Slices bare = new Slices();
    try (Connection c = dataSource.getConnection()) {
      long t0 = System.nanoTime();
      while (seconds(t0) < bound) {
        bare.run(() -> bareInsert(c));
        single.run(
            () -> queue.enqueue("bench_enqueue", Map.of("sleep_ms", 0), "user", "bench", null));
        here.run(
            () -> queue.enqueue(OWNED_HERE_KIND, Map.of("sleep_ms", 0), "user", "bench", null));
      }
    }
    db.update("TRUNCATE jobs, job_finished_minutes");
    long t0 = System.nanoTime();
    int batches = 0;
    while (seconds(t0) < bound) {
      List<EnqueueRequest> batch = new ArrayList<>(BATCH);
      for (int i = 0; i < BATCH; i++) {
        batch.add(EnqueueRequest.of("bench_enqueue", BENCH, Map.of("sleep_ms", 0)));
      }
      queue.enqueue(batch);
      batches++;
    }
    double batched = batches * BATCH / seconds(t0);
    if (measured) {
      record("inprocess_enqueue_one_at_a_time", single.rate(), "jobs/s", null);
      record(
          "inprocess_enqueue_one_at_a_time_owner_here",
          here.rate(),
          "jobs/s",
          here.rate() / bare.rate());
      record(
          "inprocess_bare_insert_interleaved", bare.rate(), "rows/s", single.rate() / bare.rate());
      record("inprocess_enqueue_batches_of_1000", batched, "jobs/s", null);
    }
  }

  /** The reference row: a uid and 200 bytes of text, one commit, as pgbench's insert. */
  private static void bareInsert(Connection c) throws Exception {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO bench_ref VALUES (?, ?)")) {
      ps.setObject(1, UUID.randomUUID());
      ps.setString(2, "x".repeat(200));
      ps.execute();
    }
  }

  /** Calls made in half-second slices, and the time they took in all. */
  private static final class Slices {
    private static final long SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    private long calls;
    private long nanos;

    /** Makes calls of {@code call} for one slice. */
    void run(ThrowingRunnable call) throws Exception {
      long start = System.nanoTime();
      long end = start + SLICE_NANOS;
      long now = start;
      while (now < end) {
        call.run();
        calls++;
        now = System.nanoTime();
      }
      nanos += now - start;
    }

    double rate() {
      return calls / (nanos / 1e9);
    }
  }

  /** A call that may throw. */
  @FunctionalInterface
  private interface ThrowingRunnable {
    void run() throws Exception;
  }

  /**
   * Registers the noop kind under {@code kind} and times it from then until none of its jobs is
   * pending or running; all {@value #JOBS} must be done. Jobs per second. The kind is unregistered
   * after, so that the engine's tick does not go on visiting every kind drained before.
   *
   * <p>It waits for the service to have run every job before it asks the database, as the peers
   * suite's harness does: an index probe every millisecond through the whole drain took about 86 us
   * of the database's time each (pg_stat_statements, 2026-12-07), a tenth of a core that the drain
   * it timed was short of. Only the outcomes still on their way are then polled for.
   */
  private double drainAll(String kind) throws InterruptedException {
    long t0 = System.nanoTime();
    DrainNoopService drain = new DrainNoopService(kind);
    manager.register(drain);
    try {
      drain.requestWake();
      assertThat(drain.ranAll.await(2, TimeUnit.MINUTES)).as(kind + " ran every job").isTrue();
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
      while (!db.query(
              "SELECT 1 FROM jobs WHERE kind = ? AND status IN ('pending', 'running') LIMIT 1",
              kind)
          .isEmpty()) {
        assertThat(System.nanoTime()).as(kind + ": every outcome written").isLessThan(deadline);
        Thread.sleep(1);
      }
      double drained = JOBS / seconds(t0);
      assertThat(
              db.query("SELECT count(*) AS n FROM jobs WHERE kind = ? AND status = 'done'", kind)
                  .get(0)
                  .get("n"))
          .isEqualTo((long) JOBS);
      return drained;
    } finally {
      ManualServices.unregister(manager, kind);
    }
  }

  /**
   * The drain's own statements one after the other, with nothing around them: {@value #JOBS}
   * pending jobs of a kind that no service here runs; from one caller, each round writes the last
   * claim's jobs done with JobCompleteMany ({@link JobOutcomes#completeMany}) and claims the next
   * {@code batch} with JobClaimMany ({@link JobClaims#claimMany}): the statements a wake-up runs
   * from {@code Refiller.SIDE_WRITE_MIN} (64) finished jobs on, with the same Java code. The engine
   * runs the two at once on two sessions, so its drain may pass this figure: it is the database
   * work of our own statements with no overlap, a reference beside the pgbench cycle (whose
   * statements are simpler), not a ceiling. Jobs per second.
   */
  private double statementsSerial(String kind, int batch) throws SQLException {
    queue.enqueue(newJobs(kind, JOBS));
    String lock = "bench-" + kind;
    long epoch = Epochs.take(dataSource, lock, "bench");
    try {
      long t0 = System.nanoTime();
      List<Completion> finished = List.of();
      JobClaims.ClaimCursor cursor = JobClaims.HEAD;
      int written = 0;
      while (true) {
        Instant now = Instant.now();
        written += outcomes.completeMany(finished, epoch, Duration.ofDays(7)).size();
        JobClaims.Claimed step =
            claims.claimMany(
                new JobClaims.ClaimRequest(kind, Shards.ALL, batch, epoch, now, cursor));
        if (step.jobs().isEmpty()) {
          break;
        }
        finished =
            step.jobs().stream().map(j -> Completion.done(j.uid, Map.of(), now, now)).toList();
        Job last = step.jobs().get(step.jobs().size() - 1);
        cursor = new JobClaims.ClaimCursor(last.priority, last.uid);
      }
      double rate = JOBS / seconds(t0);
      assertThat(written).as("jobs written done").isEqualTo(JOBS);
      return rate;
    } finally {
      db.update("DELETE FROM job_owner_epochs WHERE lock_name = ?", lock);
    }
  }

  /**
   * {@link #statementsSerial} at {@code jobs.claim-ahead-max}, {@code warmUp} rounds unmeasured,
   * then the median of three. Each round's jobs stay until the end, as the drains leave theirs
   * (deleted between rounds, they left dead index entries that the next round's claims read past:
   * 15,100-17,900 against 18,900-20,600 jobs/s in one run).
   */
  private double statementsSerialMedian(int warmUp) throws SQLException {
    List<Double> rounds = new ArrayList<>();
    for (int round = 1; round <= warmUp + 3; round++) {
      double serial = statementsSerial("bench_statements_serial_" + round, config.claimAheadMax());
      if (round > warmUp) {
        rounds.add(serial);
      }
    }
    System.out.println("statements one after the other, jobs/s: " + rounds);
    db.update("DELETE FROM jobs WHERE kind LIKE 'bench_statements_serial_%'");
    Collections.sort(rounds);
    return rounds.get(1);
  }

  /**
   * The peers suite's reference for our drain ({@code bench.mode=serial}): {@link
   * #statementsSerial} {@value #SERIAL_WARM_UP} times unmeasured, for the JIT compiler of this
   * fresh process, then the median of three.
   */
  private void measureStatementsSerialOnly() throws Exception {
    record(
        "drain_statements_serial_cycles_of_" + config.claimAheadMax(),
        statementsSerialMedian(SERIAL_WARM_UP),
        "jobs/s",
        null);
    write();
  }

  /**
   * Unmeasured drains on fresh kinds until the JIT compiler has settled: until the compiler's time
   * during each of the last {@value #WARM_DRAINS_QUIET} drains was under a twentieth of the drain's
   * (a drain with the compiler busy ran at half the rate or less, 2026-12-07: C2 still took a core
   * a while into the first dozen), at most {@value #WARM_DRAINS_MAX}. The compiler's figure is the
   * JVM's own {@link CompilationMXBean#getTotalCompilationTime}; a JVM without it runs them all.
   * Adds each drain's jobs per second to {@code drained}, in order.
   *
   * @return whether the compiler settled before the last drain allowed
   */
  private boolean warmDrains(List<Double> drained) throws Exception {
    CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    boolean timed = jit != null && jit.isCompilationTimeMonitoringSupported();
    int quiet = 0;
    for (int round = 1; round <= WARM_DRAINS_MAX; round++) {
      String kind = "bench_drain_warm_" + round;
      queue.enqueue(newJobs(kind, JOBS));
      long compiling = timed ? jit.getTotalCompilationTime() : 0;
      long t0 = System.nanoTime();
      drained.add(drainAll(kind));
      if (timed) {
        double share = (jit.getTotalCompilationTime() - compiling) / (seconds(t0) * 1000);
        quiet = share < 0.05 ? quiet + 1 : 0;
        if (quiet >= WARM_DRAINS_QUIET) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * Vacuums and analyzes {@code jobs} before a measured phase. Each drain leaves two dead row
   * versions per job behind it; after the warm-up's drains autovacuum would otherwise take them up
   * in the middle of whatever ran next, on the same two cores (the statements one after the other
   * measured 12,197-13,603 jobs/s after 16-31 warm-up drains, 24,000-27,000 before them).
   */
  private void settleTable() {
    db.update("VACUUM ANALYZE jobs");
  }

  /** Drains {@link #JOBS} jobs on each of {@code rounds} fresh kinds named {@code prefix} + n. */
  private List<Double> drainFreshKinds(String prefix, int rounds) throws Exception {
    List<Double> drained = new ArrayList<>();
    for (int round = 1; round <= rounds; round++) {
      queue.enqueue(newJobs(prefix + round, JOBS));
      drained.add(drainAll(prefix + round));
    }
    return drained;
  }

  /** {@code count} noop jobs of {@code kind}, numbered. */
  private static List<EnqueueRequest> newJobs(String kind, int count) {
    List<EnqueueRequest> jobs = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      jobs.add(EnqueueRequest.of(kind, BENCH, Map.of("i", i)));
    }
    return jobs;
  }

  private void warmUp() throws Exception {
    for (int i = 0; i < 500; i++) {
      queue.enqueue("bench_warm", Map.of("i", i), "user", "bench", null);
    }
    db.update("DELETE FROM jobs WHERE kind = 'bench_warm'");
  }

  private void record(String measure, double value, String unit, Double ratio) {
    Map<String, Object> row = new LinkedHashMap<>();
    row.put("measure", measure);
    row.put("value", Math.round(value * 100) / 100.0);
    row.put("unit", unit);
    if (ratio != null && Double.isFinite(ratio)) {
      row.put("ratio", Math.round(ratio * 100) / 100.0);
    }
    rows.add(row);
  }

  private void write() throws Exception {
    StringBuilder out = new StringBuilder();
    for (Map<String, Object> row : rows) {
      out.append('{');
      int i = 0;
      for (Map.Entry<String, Object> e : row.entrySet()) {
        if (i++ > 0) {
          out.append(", ");
        }
        out.append('"').append(e.getKey()).append("\": ");
        out.append(e.getValue() instanceof String s ? "\"" + s + "\"" : e.getValue());
      }
      out.append("}\n");
    }
    String target = System.getProperty("bench.output", "target/bench/engine.jsonl");
    Files.createDirectories(Path.of(target).toAbsolutePath().getParent());
    Files.writeString(Path.of(target), out);
    System.out.print(out);
  }

  private static double seconds(long startNanos) {
    return (System.nanoTime() - startNanos) / 1e9;
  }

  private static double percentile(List<Double> sorted, int p) {
    int index = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
    return Math.round(sorted.get(Math.max(0, index)) * 1000) / 1000.0;
  }

  /**
   * The noop kind under its own name, registered by hand when the drain starts: the jobs wait until
   * then, which a bean registered at start would not let them do.
   */
  private static final class DrainNoopService extends NoopService {
    private final String kind;
    private final CountDownLatch ranAll = new CountDownLatch(JOBS);

    DrainNoopService(String kind) {
      this.kind = kind;
    }

    @Override
    protected Map<String, Object> process(Job job) throws Exception {
      Map<String, Object> result = super.process(job);
      ranAll.countDown();
      return result;
    }

    @Override
    public String kind() {
      return kind;
    }

    @Override
    public boolean enabledByDefault() {
      return true;
    }
  }

  /** Records when each job's process starts. */
  private static final class PickupService extends JobService {
    private final Map<Integer, Long> startedAt = new ConcurrentHashMap<>();
    private final Map<Integer, CountDownLatch> latches = new ConcurrentHashMap<>();

    @Override
    public String kind() {
      return "bench_pickup";
    }

    @Override
    public String title() {
      return "pickup";
    }

    @Override
    protected Map<String, Object> process(Job job) {
      long now = System.nanoTime();
      int i = ((Number) job.payload.get("i")).intValue();
      startedAt.put(i, now);
      latches.get(i).countDown();
      return Map.of();
    }

    @Override
    protected void cleanup(Job job) {}

    /** Milliseconds from the commit of a plain insert with NOTIFY to the start of process. */
    double insertElsewhereAndAwait(Database db, int i) throws InterruptedException {
      CountDownLatch latch = new CountDownLatch(1);
      latches.put(i, latch);
      db.query(
          "WITH inserted AS (INSERT INTO jobs (uid, kind, status, payload, created_at, updated_at,"
              + " expires_at) VALUES (?, ?, 'pending', ?::jsonb, now(), now(), now() + interval"
              + " '1 day') RETURNING kind) SELECT pg_notify('jobs_enqueued', kind) FROM inserted",
          io.asyncjobs.queue.JobIds.next(),
          kind(),
          "{\"i\": " + i + "}");
      long committed = System.nanoTime();
      if (!latch.await(10, TimeUnit.SECONDS)) {
        throw new AssertionError("job " + i + " was not picked up within 10 s");
      }
      long started = startedAt.remove(i);
      latches.remove(i);
      return (started - committed) / 1e6;
    }

    /** Milliseconds from the enqueue call, and from its return, to the start of process. */
    double[] enqueueAndAwait(JobQueue queue, int i) throws InterruptedException {
      CountDownLatch latch = new CountDownLatch(1);
      latches.put(i, latch);
      long call = System.nanoTime();
      queue.enqueue(kind(), Map.of("i", i), "user", "bench", null);
      long committed = System.nanoTime();
      if (!latch.await(10, TimeUnit.SECONDS)) {
        throw new AssertionError("job " + i + " was not picked up within 10 s");
      }
      long started = startedAt.remove(i);
      latches.remove(i);
      return new double[] {(started - call) / 1e6, (started - committed) / 1e6};
    }
  }

  /**
   * The engine as the peers suite drives it: one kind, {@value #PEERS_KIND}, whose service is
   * registered only while a worker should run, at max-concurrent 10, with wake-ups on. A fresh
   * queue is an emptied {@code jobs} table (TRUNCATE), since Flyway made the schema at start.
   */
  private final class Ours implements PeerHarness.Peer {
    @Override
    public void fresh() {
      db.update("TRUNCATE jobs, job_finished_minutes");
    }

    @Override
    public void enqueue(int i) {
      queue.enqueue(PEERS_KIND, Map.of("i", i), "user", "bench", null);
    }

    @Override
    public void enqueueBatch(int from, int count) {
      List<EnqueueRequest> batch = new ArrayList<>(count);
      for (int i = from; i < from + count; i++) {
        batch.add(EnqueueRequest.of(PEERS_KIND, BENCH, Map.of("i", i)));
      }
      queue.enqueue(batch);
    }

    @Override
    public AutoCloseable startWorker(IntConsumer started) {
      JobService service = new PeersService(started);
      manager.register(service);
      service.requestWake();
      return () -> ManualServices.unregister(manager, PEERS_KIND);
    }

    @Override
    public boolean unfinished() {
      return !db.query(
              "SELECT 1 FROM jobs WHERE kind = ? AND status IN ('pending', 'running') LIMIT 1",
              PEERS_KIND)
          .isEmpty();
    }
  }

  /** The noop kind under the peers suite's name, telling the harness when each job starts. */
  private static final class PeersService extends NoopService {
    private final IntConsumer started;

    PeersService(IntConsumer started) {
      this.started = started;
    }

    @Override
    public String kind() {
      return PEERS_KIND;
    }

    @Override
    public boolean enabledByDefault() {
      return true;
    }

    @Override
    protected Map<String, Object> process(Job job) throws Exception {
      started.accept(((Number) job.payload.get("i")).intValue());
      return super.process(job);
    }
  }

  /** Wake-ups on, as in production; noisy logs off. */
  public static class Profile implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.ofEntries(
          Map.entry("jobs.wake-ups", "true"),
          // The shipped claim-ahead (JobsConfig), which the test profile turns off.
          Map.entry("jobs.defaults.claim-ahead", "20ms"),
          // The shipped start on enqueue (JobsConfig), which the test profile turns off too.
          Map.entry("jobs.start-on-enqueue", "true"),
          Map.entry("jobs.defaults.max-concurrent", "10"),
          Map.entry("jobs.services." + PER_THREAD_KIND + ".claim-ahead", "0s"),
          Map.entry("jobs.services." + PEERS_KIND + ".claim-ahead", "20ms"),
          Map.entry("jobs.services.bench_pickup.max-concurrent", "10"),
          Map.entry("jobs.services." + PEERS_KIND + ".max-concurrent", "10"),
          Map.entry("quarkus.log.level", "WARN"),
          Map.entry("quarkus.log.category.\"io.asyncjobs\".level", "WARN"));
    }
  }
}
