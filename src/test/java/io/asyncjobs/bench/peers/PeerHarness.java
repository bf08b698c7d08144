package io.asyncjobs.bench.peers;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;

/**
 * The peers suite's measures ({@code bench/run.sh peers}), run the same way for each system a Java
 * driver speaks for: ours (EngineBenchmark in peers mode) and db-scheduler
 * (bench/peers/db-scheduler, which compiles this file too). bench/peers/harness.mjs is the same for
 * the Node drivers; the two must stay in step.
 *
 * <p>The driver touches {@code <control>/<system>.ready}, then waits for {@code
 * <control>/<system>.run}. That file holds a round number (run the warm-up and the four measures,
 * append one JSON line per figure to the output file, then touch {@code <system>.done-<round>}) or
 * {@code quit}. Before the first round it runs, a system drains {@code BENCH_PEERS_WARMUP_DRAINS}
 * times unmeasured. A failed round leaves {@code <system>.failed-<round>} with the error.
 *
 * <p>Pure JDK: the db-scheduler driver compiles it without the rest of the test sources.
 */
public final class PeerHarness {

  /** What a driver does with its system; the harness times it. */
  public interface Peer {
    /** Empties the queue: a fresh schema or table, nothing waiting, no worker running. */
    void fresh() throws Exception;

    /** Enqueues one no-op job with payload {@code {"i": i}} and returns once it is committed. */
    void enqueue(int i) throws Exception;

    /** Enqueues the jobs {@code from .. from + count - 1} in one call of the batch API. */
    void enqueueBatch(int from, int count) throws Exception;

    /**
     * Starts a worker at concurrency 10 whose handler calls {@code started.accept(i)} first and
     * then returns; closing the result stops the worker.
     */
    AutoCloseable startWorker(IntConsumer started) throws Exception;

    /** Whether any job is still waiting or running. */
    boolean unfinished() throws Exception;
  }

  /**
   * The sizes and bounds of one round.
   *
   * @param jobs jobs per enqueue and drain measure
   * @param batch jobs per batch call
   * @param pickups single jobs timed from enqueue to handler
   * @param enqueueSeconds bound of the one-at-a-time enqueue
   * @param drainSeconds bound of the drain
   * @param pickupSeconds bound of the pickups
   * @param warmup jobs of the unmeasured warm-up before each round
   * @param warmupDrains unmeasured drains of {@code jobs} jobs before the first round
   */
  public record Settings(
      int jobs,
      int batch,
      int pickups,
      int enqueueSeconds,
      int drainSeconds,
      int pickupSeconds,
      int warmup,
      int warmupDrains) {

    /** The defaults, changed by the same BENCH_PEERS_* variables as the Node harness reads. */
    public static Settings fromEnvironment() {
      return new Settings(
          env("BENCH_PEERS_JOBS", 10_000),
          env("BENCH_PEERS_BATCH", 1_000),
          env("BENCH_PEERS_PICKUPS", 200),
          env("BENCH_PEERS_ENQUEUE_SECONDS", 15),
          env("BENCH_PEERS_DRAIN_SECONDS", 60),
          env("BENCH_PEERS_PICKUP_SECONDS", 20),
          env("BENCH_PEERS_WARMUP", 3000),
          env("BENCH_PEERS_WARMUP_DRAINS", 20));
    }

    Settings warm() {
      return new Settings(
          warmup,
          Math.min(batch, warmup),
          20,
          enqueueSeconds,
          drainSeconds,
          pickupSeconds,
          warmup,
          0);
    }

    private static int env(String name, int fallback) {
      String value = System.getenv(name);
      return value == null || value.isBlank() ? fallback : Integer.parseInt(value.trim());
    }
  }

  private final String system;
  private final Peer peer;
  private final Settings settings;
  private final int spreadMs;
  private boolean warmedUp;

  /**
   * A harness for one system.
   *
   * @param spreadMs spread of the random pause between pickups: at least the polling interval of a
   *     system that polls, so that arrivals do not fall into step with its loop
   */
  public PeerHarness(String system, Peer peer, Settings settings, int spreadMs) {
    this.system = system;
    this.peer = peer;
    this.settings = settings;
    this.spreadMs = spreadMs;
  }

  /**
   * Runs rounds on command until told to quit, or fails after {@code idle} without a command.
   *
   * @param control the folder of the control files
   * @param output the JSON-lines file the figures are appended to
   */
  public void serve(Path control, Path output, Duration idle) throws Exception {
    Path command = control.resolve(system + ".run");
    Files.writeString(control.resolve(system + ".ready"), "");
    long idleSince = System.nanoTime();
    while (true) {
      if (!Files.exists(command)) {
        if (System.nanoTime() - idleSince > idle.toNanos()) {
          throw new IllegalStateException(system + ": no command for " + idle);
        }
        Thread.sleep(50);
        continue;
      }
      String round = Files.readString(command).trim();
      Files.delete(command);
      if (round.equals("quit")) {
        return;
      }
      try {
        if (!warmedUp) {
          // Unmeasured, every system alike: a JIT compiler took 15-31 drains of 10,000 to settle
          // (engine suite, 2026-12-07), and what the suite compares is replicas that have run.
          for (int i = 1; i <= settings.warmupDrains(); i++) {
            System.out.println(system + " warm-up drain " + i + ": " + drain(settings));
          }
          warmedUp = true;
        }
        measureAll(settings.warm()); // unmeasured: JIT, pools and prepared statements
        StringBuilder lines = new StringBuilder();
        for (String row : measureAll(settings)) {
          lines.append("{\"system\": \"").append(system).append("\", \"round\": ").append(round);
          lines.append(", ").append(row).append("}\n");
        }
        Files.writeString(output, lines, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        Files.writeString(control.resolve(system + ".done-" + round), "");
      } catch (Exception | Error e) {
        Files.writeString(control.resolve(system + ".failed-" + round), e.toString());
        throw e;
      }
      idleSince = System.nanoTime();
    }
  }

  private List<String> measureAll(Settings s) throws Exception {
    List<String> rows = new ArrayList<>();
    // One at a time.
    peer.fresh();
    long t0 = System.nanoTime();
    int i = 0;
    while (i < s.jobs() && seconds(t0) < s.enqueueSeconds()) {
      peer.enqueue(i++);
    }
    rows.add(row("enqueue_one_at_a_time", i / seconds(t0), "jobs/s", "\"jobs\": " + i));
    // Batches.
    peer.fresh();
    t0 = System.nanoTime();
    enqueueAll(s);
    rows.add(
        row(
            "enqueue_batches_of_" + s.batch(),
            s.jobs() / seconds(t0),
            "jobs/s",
            "\"jobs\": " + s.jobs()));
    rows.add(drain(s));
    rows.addAll(pickups(s));
    return rows;
  }

  private void enqueueAll(Settings s) throws Exception {
    for (int from = 0; from < s.jobs(); from += s.batch()) {
      peer.enqueueBatch(from, Math.min(s.batch(), s.jobs() - from));
    }
  }

  /**
   * Jobs enqueued (untimed) before any worker runs; timed from the worker's start until the handler
   * has run for every job and the database holds none unfinished.
   */
  private String drain(Settings s) throws Exception {
    peer.fresh();
    enqueueAll(s);
    AtomicInteger handled = new AtomicInteger();
    CountDownLatch everyJob = new CountDownLatch(s.jobs());
    long t0 = System.nanoTime();
    boolean complete;
    double elapsed;
    try (AutoCloseable worker =
        peer.startWorker(
            i -> {
              handled.incrementAndGet();
              everyJob.countDown();
            })) {
      complete = everyJob.await(s.drainSeconds(), TimeUnit.SECONDS);
      while (complete && peer.unfinished()) {
        complete = seconds(t0) < s.drainSeconds();
        Thread.sleep(1);
      }
      elapsed = seconds(t0);
    }
    return row(
        "drain_concurrency_10",
        handled.get() / elapsed,
        "jobs/s",
        "\"jobs\": " + s.jobs() + ", \"complete\": " + complete);
  }

  /**
   * Single jobs into an idle queue, from the enqueue call's return to the handler's start, each
   * after a random pause of 5 ms plus up to the spread.
   */
  private List<String> pickups(Settings s) throws Exception {
    peer.fresh();
    Map<Integer, Long> startedAt = new ConcurrentHashMap<>();
    Map<Integer, CountDownLatch> latches = new ConcurrentHashMap<>();
    List<Double> latencies = new ArrayList<>();
    try (AutoCloseable worker =
        peer.startWorker(
            i -> {
              startedAt.put(i, System.nanoTime());
              CountDownLatch latch = latches.get(i);
              if (latch != null) {
                latch.countDown();
              }
            })) {
      long t0 = System.nanoTime();
      for (int k = 0; k < s.pickups() && seconds(t0) < s.pickupSeconds(); k++) {
        CountDownLatch latch = new CountDownLatch(1);
        latches.put(k, latch);
        peer.enqueue(k);
        long returned = System.nanoTime();
        if (!latch.await(10, TimeUnit.SECONDS)) {
          throw new IllegalStateException(system + ": pickup " + k + " did not start within 10 s");
        }
        latencies.add((startedAt.get(k) - returned) / 1e6);
        latches.remove(k);
        Thread.sleep(5 + ThreadLocalRandom.current().nextInt(Math.max(1, spreadMs)));
      }
    }
    Collections.sort(latencies);
    String samples = "\"samples\": " + latencies.size();
    return List.of(
        row("pickup_p50", percentile(latencies, 50), "ms", samples),
        row("pickup_p99", percentile(latencies, 99), "ms", samples));
  }

  private static String row(String measure, double value, String unit, String extra) {
    return String.format(
        "\"measure\": \"%s\", \"value\": %s, \"unit\": \"%s\", %s",
        measure, Math.round(value * 100) / 100.0, unit, extra);
  }

  private static double percentile(List<Double> sorted, int p) {
    return sorted.get(Math.max(0, (int) Math.ceil(p / 100.0 * sorted.size()) - 1));
  }

  private static double seconds(long startNanos) {
    return (System.nanoTime() - startNanos) / 1e9;
  }
}
