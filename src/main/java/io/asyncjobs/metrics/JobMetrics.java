package io.asyncjobs.metrics;

import io.asyncjobs.config.JobsConfig;
import io.asyncjobs.engine.EngineMetrics;
import io.asyncjobs.engine.ServiceManager;
import io.asyncjobs.engine.TickResult;
import io.asyncjobs.lock.OwnerLocks;
import io.asyncjobs.queue.Completion;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobStatus;
import io.asyncjobs.queue.QueueDepths;
import io.asyncjobs.queue.QueueMetrics;
import io.asyncjobs.settings.PauseStore;
import io.asyncjobs.time.Clock;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.scheduler.Scheduled;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jboss.logging.Logger;

/**
 * The per-kind job meters, exposed at {@code /q/metrics}: enqueues and retries (counted by {@link
 * io.asyncjobs.queue.JobQueue}), claims, outcomes, durations, bytes and items (reported by the
 * owner's engine through {@link EngineMetrics}), and the queue depth, the age of the oldest pending
 * job and whether the kind is paused, read from the database by {@link #refreshQueueGauges()} on
 * every replica. The tags are {@code kind}, {@code status}, {@code outcome}, {@code reason} and
 * {@code shard}, so the number of series stays bounded: never a job uid. One gauge names owners,
 * the longest wait per owner, and only for the {@value QueueDepths#OWNERS_SHOWN} owners per kind
 * waiting longest, so it too stays bounded (an owner id the deployment considers personal data
 * shows there, as it does in the admin page). The names are described in {@code docs/metrics.md}.
 */
@ApplicationScoped
public class JobMetrics implements EngineMetrics, QueueMetrics {

  private static final Logger LOG = Logger.getLogger(JobMetrics.class);

  /** Bucket boundaries of job durations and pickup delays: 10 ms to 1 h. */
  static final Duration[] JOB_TIME_BUCKETS = {
    Duration.ofMillis(10),
    Duration.ofMillis(50),
    Duration.ofMillis(100),
    Duration.ofMillis(250),
    Duration.ofMillis(500),
    Duration.ofSeconds(1),
    Duration.ofMillis(2500),
    Duration.ofSeconds(5),
    Duration.ofSeconds(10),
    Duration.ofSeconds(30),
    Duration.ofMinutes(1),
    Duration.ofMinutes(2),
    Duration.ofMinutes(5),
    Duration.ofMinutes(10),
    Duration.ofMinutes(30),
    Duration.ofHours(1)
  };

  /** Bucket boundaries of one tick's run time: 1 ms to 10 s. */
  static final Duration[] TICK_BUCKETS = {
    Duration.ofMillis(1),
    Duration.ofMillis(5),
    Duration.ofMillis(10),
    Duration.ofMillis(25),
    Duration.ofMillis(50),
    Duration.ofMillis(100),
    Duration.ofMillis(250),
    Duration.ofMillis(500),
    Duration.ofSeconds(1),
    Duration.ofSeconds(2),
    Duration.ofSeconds(5),
    Duration.ofSeconds(10)
  };

  private final MeterRegistry registry;
  private final Clock clock;
  private final QueueDepths queueDepths;
  private final ServiceManager services;
  private final ConcurrentMap<String, KindMeters> kinds = new ConcurrentHashMap<>();
  private final ConcurrentMap<ShardKey, ShardMeters> shardMeters = new ConcurrentHashMap<>();
  private final ConcurrentMap<OwnerKey, OwnerMeter> ownerMeters = new ConcurrentHashMap<>();

  /** What {@code jobs_callbacks_total} counts. */
  private static final String CALLBACKS_DESCRIPTION =
      "Callback deliveries by outcome: delivered (2xx), failed (tried again later), gave-up";

  private volatile boolean refreshFailing;
  private final OwnerLocks ownerLocks;
  private final Duration followerInterval;
  private volatile long lastRefreshNanos;
  private final PauseStore pauses;

  /** Callers per shared enqueue commit; its count is the number of such commits. */
  private final DistributionSummary sharedCommits;

  JobMetrics(
      MeterRegistry registry,
      Clock clock,
      QueueDepths queueDepths,
      ServiceManager services,
      OwnerLocks ownerLocks,
      JobsConfig config,
      PauseStore pauses) {
    this.registry = registry;
    this.sharedCommits =
        DistributionSummary.builder("jobs.enqueue.shared.commit.callers")
            .description("Single enqueues that arrived together and shared one commit")
            .register(registry);
    this.pauses = pauses;
    this.clock = clock;
    this.queueDepths = queueDepths;
    this.services = services;
    this.ownerLocks = ownerLocks;
    this.followerInterval = config.followerGaugeInterval();
  }

  // ---- from the queue --------------------------------------------------------------------

  @Override
  public void enqueued(String kind, int count) {
    if (count > 0) {
      meters(kind).enqueued.increment(count);
    }
  }

  @Override
  public void sharedCommit(int callers) {
    sharedCommits.record(callers);
  }

  @Override
  public void retried(String kind) {
    meters(kind).retried.increment();
  }

  @Override
  public void retried(String kind, long count) {
    if (count > 0) {
      meters(kind).retried.increment(count);
    }
  }

  // ---- from the engine -------------------------------------------------------------------

  @Override
  public void claimed(String kind, Job job, Instant startedAt) {
    Instant due = dueSince(job);
    if (due != null) {
      meters(kind).pickupDelay.record(nonNegative(Duration.between(due, startedAt)));
    }
  }

  /**
   * When the job became due for a claim: its creation, its {@code run_after} when later, or the
   * time its last failed attempt set for the next one. A delayed or retried job is not waiting for
   * a turn before then.
   */
  static Instant dueSince(Job job) {
    Instant due = job.createdAt;
    if (job.runAfter != null && (due == null || job.runAfter.isAfter(due))) {
      due = job.runAfter;
    }
    if (job.attempts != null
        && !job.attempts.isEmpty()
        && job.attempts.get(job.attempts.size() - 1).get("retry_at") instanceof String text) {
      try {
        Instant retry = Instant.parse(text);
        if (due == null || retry.isAfter(due)) {
          due = retry;
        }
      } catch (java.time.format.DateTimeParseException e) {
        // keep the earlier time
      }
    }
    return due;
  }

  /**
   * One callback delivery of a job of {@code kind} ended: {@code delivered}, {@code failed} (tried
   * again later) or {@code gave-up}.
   */
  public void callback(String kind, String outcome) {
    callbackCounter(kind, outcome).increment();
  }

  private Counter callbackCounter(String kind, String outcome) {
    return Counter.builder("jobs.callbacks")
        .description(CALLBACKS_DESCRIPTION)
        .tag("kind", kind)
        .tag("outcome", outcome)
        .register(registry);
  }

  @Override
  public void completed(String kind, Completion completion) {
    KindMeters m = meters(kind);
    (completion.status() == JobStatus.DONE ? m.completedDone : m.completedFailed).increment();
    m.duration.record(Duration.ofMillis(completion.durationMs()));
    addStat(m.bytesIn, completion.stat("bytes_in"));
    addStat(m.bytesOut, completion.stat("bytes_out"));
    addStat(m.items, completion.stat("item_count"));
  }

  @Override
  public void retentionLag(String kind, Duration lag) {
    meters(kind).retentionLagMillis.set(lag.toMillis());
  }

  @Override
  public void ran(String kind, TickResult result) {
    KindMeters m = meters(kind);
    m.requeued.increment(result.requeued());
    m.abandoned.increment(result.abandoned());
    m.swept.increment(result.swept());
    m.cleanupErrors.increment(result.cleanupErrors());
    m.timedOut.increment(result.timedOut());
    m.putBackDatabase.increment(result.retried());
    m.putBackGivenUp.increment(result.released());
    m.putBackTransient.increment(result.rescheduled());
    m.adopted.increment(result.adopted());
  }

  @Override
  public void tickTook(String kind, Duration elapsed) {
    meters(kind).tickDuration.record(nonNegative(elapsed));
  }

  // ---- from the database -----------------------------------------------------------------

  /**
   * Reads the queue depth by kind and status, and the oldest pending job of each kind, in one
   * grouped query, and which kinds are paused, and sets the gauges; a kind or status with no rows
   * reads zero. The owner (with shards, the owner of the first shard by key) reads them every
   * {@code jobs.tick-interval}, other replicas every {@code jobs.follower-gauge-interval}. On a
   * database error the gauges keep their last values.
   */
  @Scheduled(
      identity = "jobs-metrics-refresh",
      every = "${jobs.tick-interval}",
      concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
  public void refreshQueueGauges() {
    long nowNanos = System.nanoTime();
    // One replica reads every tick: the owner of the first shard (the one owner without shards);
    // with shards every replica owns some, and all of them reading each tick would only repeat it.
    java.util.TreeMap<String, io.asyncjobs.lock.OwnerLock> locks =
        new java.util.TreeMap<>(ownerLocks.all());
    boolean reader = !locks.isEmpty() && locks.firstEntry().getValue().isOwner();
    if (!reader
        && lastRefreshNanos != 0
        && nowNanos - lastRefreshNanos < followerInterval.toNanos()) {
      return;
    }
    lastRefreshNanos = nowNanos;
    QueueDepths.Depths depths;
    Set<String> paused;
    try {
      depths = queueDepths.read();
      paused = pauses.all().keySet();
    } catch (SQLException | RuntimeException e) {
      if (!refreshFailing) {
        refreshFailing = true;
        LOG.warnf("Could not read the queue depth; the gauges keep their last values: %s", e);
      }
      return;
    }
    if (refreshFailing) {
      refreshFailing = false;
      LOG.info("Reading the queue depth works again");
    }
    Map<String, Map<JobStatus, Long>> counts = depths.counts();
    Set<String> all = new HashSet<>(services.kinds());
    all.addAll(counts.keySet());
    all.addAll(kinds.keySet());
    for (String kind : all) {
      KindMeters m = meters(kind);
      Map<JobStatus, Long> byStatus = counts.getOrDefault(kind, Map.of());
      for (JobStatus status : JobStatus.values()) {
        m.depth.get(status).set(byStatus.getOrDefault(status, 0L));
      }
      m.oldestPending.set(depths.oldestPending().get(kind));
      m.paused.set(paused.contains(kind) ? 1 : 0);
    }
    refreshShardGauges(depths.byShard());
    refreshOwnerGauges(depths.oldestDueByOwner());
  }

  /**
   * Sets the waiting-time gauge of each kind's owners waiting longest ({@link
   * QueueDepths#OWNERS_SHOWN} per kind, so the series stay few however many owners there are); an
   * owner that left that set loses its gauge.
   */
  private void refreshOwnerGauges(Map<String, Map<String, Instant>> byKind) {
    Set<OwnerKey> shown = new HashSet<>();
    byKind.forEach(
        (kind, owners) ->
            owners.forEach(
                (owner, since) -> {
                  OwnerKey key = new OwnerKey(kind, owner);
                  shown.add(key);
                  ownerMeters.computeIfAbsent(key, OwnerMeter::new).since.set(since);
                }));
    for (OwnerKey key : Set.copyOf(ownerMeters.keySet())) {
      if (!shown.contains(key)) {
        registry.remove(ownerMeters.remove(key).gauge);
      }
    }
  }

  /**
   * Sets the pending and running gauges of every shard that the mapping names or that has such jobs
   * (a retired one); a shard that has neither any more loses its gauges.
   */
  private void refreshShardGauges(Map<String, Map<String, Map<JobStatus, Long>>> byShard) {
    Set<ShardKey> shown = new HashSet<>();
    for (String kind : services.kinds()) {
      services
          .jobService(kind)
          .ifPresent(s -> s.shards().forEach(shard -> shown.add(new ShardKey(kind, shard))));
    }
    byShard.forEach(
        (kind, shards) -> shards.keySet().forEach(shard -> shown.add(new ShardKey(kind, shard))));
    for (ShardKey key : shown) {
      Map<JobStatus, Long> counts =
          byShard.getOrDefault(key.kind(), Map.of()).getOrDefault(key.shard(), Map.of());
      ShardMeters m = shardMeters.computeIfAbsent(key, ShardMeters::new);
      m.pending.set(counts.getOrDefault(JobStatus.PENDING, 0L));
      m.running.set(counts.getOrDefault(JobStatus.RUNNING, 0L));
    }
    for (ShardKey key : Set.copyOf(shardMeters.keySet())) {
      if (!shown.contains(key)) {
        shardMeters.remove(key).remove();
      }
    }
  }

  // ---- meters ----------------------------------------------------------------------------

  private record ShardKey(String kind, String shard) {}

  private record OwnerKey(String kind, String owner) {}

  /** Seconds since {@code oldest}, 0 when it is null. */
  private double ageSeconds(AtomicReference<Instant> oldest) {
    Instant created = oldest.get();
    if (created == null) {
      return 0;
    }
    return Math.max(0, Duration.between(created, clock.now()).toMillis() / 1000.0);
  }

  /** How long one owner's longest-waiting due job of a kind has waited. */
  private final class OwnerMeter {
    final AtomicReference<Instant> since = new AtomicReference<>();
    final Gauge gauge;

    OwnerMeter(OwnerKey key) {
      gauge =
          Gauge.builder("jobs.owner.oldest.due.age", since, JobMetrics.this::ageSeconds)
              .description(
                  "Seconds the owner's longest-waiting due job of the kind has waited for its"
                      + " turn; only the owners waiting longest, ten per kind")
              .tag("kind", key.kind())
              .tag("owner", key.owner())
              .baseUnit("seconds")
              .strongReference(true)
              .register(registry);
    }
  }

  /** The queue gauges of one shard of a kind: its pending and running jobs. */
  private final class ShardMeters {
    final AtomicLong pending = new AtomicLong();
    final AtomicLong running = new AtomicLong();
    final Gauge pendingGauge;
    final Gauge runningGauge;

    ShardMeters(ShardKey key) {
      pendingGauge = gauge(key, JobStatus.PENDING, pending);
      runningGauge = gauge(key, JobStatus.RUNNING, running);
    }

    private Gauge gauge(ShardKey key, JobStatus status, AtomicLong value) {
      return Gauge.builder("jobs.shard.queue.depth", value, AtomicLong::get)
          .description("Pending and running jobs of one shard of a kind, as of the last refresh")
          .tag("kind", key.kind())
          .tag("shard", key.shard())
          .tag("status", status.dbValue())
          .strongReference(true)
          .register(registry);
    }

    void remove() {
      registry.remove(pendingGauge);
      registry.remove(runningGauge);
    }
  }

  private KindMeters meters(String kind) {
    return kinds.computeIfAbsent(kind, KindMeters::new);
  }

  private static void addStat(Counter counter, Long value) {
    if (value != null && value > 0) {
      counter.increment(value);
    }
  }

  private static Duration nonNegative(Duration d) {
    return d.isNegative() ? Duration.ZERO : d;
  }

  /** Every meter of one kind, registered together so that each series exists from the start. */
  private final class KindMeters {
    final Counter enqueued;
    final Counter retried;
    final Counter completedDone;
    final Counter completedFailed;
    final Timer duration;
    final Timer pickupDelay;
    final Counter bytesIn;
    final Counter bytesOut;
    final Counter items;
    final Counter requeued;
    final Counter abandoned;
    final Counter swept;
    final Counter cleanupErrors;
    final Counter timedOut;
    final Counter putBackDatabase;
    final Counter putBackGivenUp;
    final Counter putBackTransient;
    final Counter adopted;
    final Timer tickDuration;
    final Map<JobStatus, AtomicLong> depth = new EnumMap<>(JobStatus.class);
    final AtomicReference<Instant> oldestPending = new AtomicReference<>();
    final AtomicLong retentionLagMillis = new AtomicLong();
    final AtomicLong paused = new AtomicLong();

    KindMeters(String kind) {
      enqueued = counter("jobs.enqueued", kind, "Jobs enqueued");
      retried = counter("jobs.retried", kind, "Failed jobs put back to pending by a caller");
      completedDone = completed(kind, "done");
      completedFailed = completed(kind, "failed");
      duration =
          jobTimer(
              "jobs.duration", kind, "Processing time of completed jobs, from start to outcome");
      pickupDelay =
          jobTimer("jobs.pickup.delay", kind, "Time claimed jobs waited between enqueue and start");
      bytesIn = counter("jobs.bytes.in", kind, "Bytes read by completed jobs");
      bytesOut = counter("jobs.bytes.out", kind, "Bytes written by completed jobs");
      items = counter("jobs.items", kind, "Items processed by completed jobs");
      requeued = recovered(kind, "requeued");
      abandoned = recovered(kind, "failed");
      swept = counter("jobs.swept", kind, "Expired jobs deleted with their files");
      cleanupErrors =
          counter("jobs.cleanup.errors", kind, "Expired jobs kept because their cleanup failed");
      timedOut = counter("jobs.timed.out", kind, "Jobs failed for running past their timeout");
      putBackDatabase = putBack(kind, "database");
      putBackGivenUp = putBack(kind, "given-up");
      putBackTransient = putBack(kind, "transient-failure");
      // The callbacks' counters, at 0 from the start so that a rate sees their first delivery;
      // the deliveries (io.asyncjobs.callbacks) count into these same meters.
      for (String outcome : List.of("delivered", "failed", "gave-up")) {
        callbackCounter(kind, outcome);
      }
      adopted =
          counter(
              "jobs.adopted",
              kind,
              "Running jobs kept under a new epoch after the owner took its lock back");
      tickDuration =
          Timer.builder("jobs.tick.duration")
              .description("Time one scheduled run of a service took")
              .tag("kind", kind)
              .serviceLevelObjectives(TICK_BUCKETS)
              .register(registry);
      for (JobStatus status : JobStatus.values()) {
        AtomicLong value = new AtomicLong();
        depth.put(status, value);
        Gauge.builder("jobs.queue.depth", value, AtomicLong::get)
            .description("Jobs in the database by status, as of the last refresh")
            .tag("kind", kind)
            .tag("status", status.dbValue())
            .strongReference(true)
            .register(registry);
      }
      Gauge.builder("jobs.oldest.pending.age", oldestPending, JobMetrics.this::ageSeconds)
          .description("Seconds the oldest pending job has waited, 0 when none is pending")
          .tag("kind", kind)
          .baseUnit("seconds")
          .strongReference(true)
          .register(registry);
      Gauge.builder("jobs.service.paused", paused, AtomicLong::get)
          .description("1 while an admin has paused the kind (its owner claims nothing), else 0")
          .tag("kind", kind)
          .strongReference(true)
          .register(registry);
      Gauge.builder("jobs.retention.lag", retentionLagMillis, v -> v.get() / 1000.0)
          .description(
              "Seconds the oldest expired job has waited past its expiry for the sweep, 0 when the"
                  + " sweep has caught up; reported by the owner")
          .tag("kind", kind)
          .baseUnit("seconds")
          .strongReference(true)
          .register(registry);
    }

    private Counter counter(String name, String kind, String description) {
      return Counter.builder(name).description(description).tag("kind", kind).register(registry);
    }

    /** A per-kind timer whose histogram spans JOB_TIME_BUCKETS (10 ms to 1 h). */
    private Timer jobTimer(String name, String kind, String description) {
      return Timer.builder(name)
          .description(description)
          .tag("kind", kind)
          .publishPercentileHistogram()
          .serviceLevelObjectives(JOB_TIME_BUCKETS)
          .minimumExpectedValue(JOB_TIME_BUCKETS[0])
          .maximumExpectedValue(JOB_TIME_BUCKETS[JOB_TIME_BUCKETS.length - 1])
          .register(registry);
    }

    private Counter completed(String kind, String status) {
      return Counter.builder("jobs.completed")
          .description("Job outcomes written, by final status")
          .tag("kind", kind)
          .tag("status", status)
          .register(registry);
    }

    private Counter putBack(String kind, String reason) {
      return Counter.builder("jobs.put.back")
          .description(
              "Running jobs put back to pending by the replica that ran them: the database went"
                  + " away under the task, its work was given up (handover, lost lock), or it"
                  + " failed transiently and is tried again after a backoff")
          .tag("kind", kind)
          .tag("reason", reason)
          .register(registry);
    }

    private Counter recovered(String kind, String outcome) {
      return Counter.builder("jobs.orphans.recovered")
          .description("Orphaned running jobs recovered: put back to pending, or failed")
          .tag("kind", kind)
          .tag("outcome", outcome)
          .register(registry);
    }
  }
}
