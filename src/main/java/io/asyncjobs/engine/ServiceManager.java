package io.asyncjobs.engine;

import io.asyncjobs.config.JobsConfig;
import io.asyncjobs.config.Shards;
import io.asyncjobs.lock.HandOff;
import io.asyncjobs.lock.Members;
import io.asyncjobs.lock.OlderRelease;
import io.asyncjobs.lock.OwnerLocks;
import io.asyncjobs.lock.Trust;
import io.asyncjobs.queue.JobClaims;
import io.asyncjobs.queue.JobOutcomes;
import io.asyncjobs.queue.JobQueue;
import io.asyncjobs.queue.JobRecovery;
import io.asyncjobs.queue.JobShards;
import io.asyncjobs.queue.JobSweep;
import io.asyncjobs.queue.JobsEnqueued;
import io.asyncjobs.queue.LocalStarts;
import io.asyncjobs.queue.LocalWakeUps;
import io.asyncjobs.settings.SettingsStore;
import io.asyncjobs.time.Clock;
import io.asyncjobs.tracing.Tracing;
import io.quarkus.arc.ClientProxy;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.TransactionPhase;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Instance;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jboss.logging.Logger;

/**
 * Keeps the registry of services and drives them. Every {@link BaseService} bean is registered at
 * start without extra code; {@link #register(BaseService)} adds hand-made ones. The scheduled
 * {@link #tick()} calls {@link BaseService#supervise()} on each, and a failure in one service never
 * stops the others or the next tick.
 */
@ApplicationScoped
public class ServiceManager implements LocalWakeUps, LocalStarts {

  private static final Logger LOG = Logger.getLogger(ServiceManager.class);

  private final Map<String, BaseService> services =
      Collections.synchronizedMap(new LinkedHashMap<>());
  private final Set<String> failing = ConcurrentHashMap.newKeySet();
  private final Set<String> stuck = ConcurrentHashMap.newKeySet();
  private final Map<String, Runner> runners = new ConcurrentHashMap<>();

  /** How often the trust watch looks at the lock; part of the takeover margin's arithmetic. */
  static final long TRUST_WATCH_MILLIS = 200;

  private final ScheduledExecutorService trustWatch = daemonScheduler("jobs-trust-watch");
  private final ScheduledExecutorService balance = daemonScheduler("jobs-balance");

  /** The members heartbeat, apart from the balance so that a long handover does not delay it. */
  private final ScheduledExecutorService heartbeat = daemonScheduler("jobs-members");

  /** The last heartbeat failure, so that a streak is logged once. */
  private volatile String heartbeatError;

  private final JobsConfig config;
  private final Members members;
  private final OlderRelease olderRelease;
  private final OwnerLocks locks;
  private final Shards shards;

  /** Which shards have work, for the look for retired shards. */
  private final JobShards jobShards;

  private final HandOff handOff;

  /** Every shard's lock name, with the kind and shard key it belongs to, for the start check. */
  private final Map<String, String> lockNames = new ConcurrentHashMap<>();

  private final EngineContext context;

  ServiceManager(
      JobsConfig config,
      OwnerLocks locks,
      Members members,
      OlderRelease olderRelease,
      Shards shards,
      JobClaims jobClaims,
      JobOutcomes jobOutcomes,
      JobRecovery jobRecovery,
      JobSweep jobSweep,
      JobShards jobShards,
      SettingsStore settings,
      Clock clock,
      HandOff handOff,
      Instance<EngineMetrics> metrics,
      Instance<Deliveries> deliveries,
      Tracing tracing) {
    this.config = config;
    this.locks = locks;
    this.members = members;
    this.olderRelease = olderRelease;
    this.shards = shards;
    this.jobShards = jobShards;
    this.handOff = handOff;
    this.context =
        new EngineContext(
            jobClaims,
            jobOutcomes,
            jobRecovery,
            jobSweep,
            settings,
            clock,
            config.sweepBatchSize(),
            config.sweepBudget(),
            config.cleanupRetryDelay(),
            config.wakeUps(),
            config.claimAheadMax(),
            config.claimAheadUnwrittenMax(),
            metrics.isResolvable() ? metrics.get() : EngineMetrics.NONE,
            tracing.enabled() ? new JobTraces(tracing.tracer()) : JobTraces.OFF,
            deliveries.isResolvable() ? deliveries.get() : Deliveries.NONE);
  }

  void onStart(@Observes StartupEvent event, @Any Instance<BaseService> beans) {
    // Touching the lock creates it, which starts competing for ownership.
    LOG.infof("Replica %s", locks.identity());
    for (BaseService service : beans) {
      register(service);
    }
    // Finer than the scheduler's one-second resolution, and independent of the tick.
    trustWatch.scheduleWithFixedDelay(
        () -> {
          try {
            watchTrust();
          } catch (RuntimeException e) {
            LOG.debugf(e, "The trust watch failed once");
          }
        },
        TRUST_WATCH_MILLIS,
        TRUST_WATCH_MILLIS,
        TimeUnit.MILLISECONDS);
    if (!shards.isUnsharded()) {
      // The locks start without competing; the first round, a retry period from now (when the
      // other replicas have seen this one), says for how many.
      ShardBalancer shardBalancer =
          new ShardBalancer(
              members,
              locks,
              handOff::announce,
              this::shardGroups,
              this::handOverShard,
              olderRelease);
      long period = config.lock().retryPeriod().toMillis();
      heartbeat.scheduleWithFixedDelay(this::beat, 0, period, TimeUnit.MILLISECONDS);
      balance.scheduleWithFixedDelay(shardBalancer::balance, period, period, TimeUnit.MILLISECONDS);
    }
  }

  /** How often every replica looks for shards of an earlier mapping that still have jobs. */
  static final long RETIRED_SCAN_MILLIS = 10_000;

  /** When the tick last looked for retired shards; 0 before the first look. */
  private volatile long retiredScannedNanos;

  /** From the tick: at its first run, then every {@link #RETIRED_SCAN_MILLIS}. */
  private void followRetiredShardsSafely() {
    long now = System.nanoTime();
    if (retiredScannedNanos != 0
        && now - retiredScannedNanos < TimeUnit.MILLISECONDS.toNanos(RETIRED_SCAN_MILLIS)) {
      return;
    }
    retiredScannedNanos = now;
    try {
      followRetiredShards();
    } catch (RuntimeException e) {
      LOG.debugf("Looking for retired shards failed; trying again later: %s", e.getMessage());
    }
  }

  /**
   * Retired shards: a shard the current mapping does not name (the mapping changed) keeps its jobs,
   * and those are worked under that shard's own lock, which replicas compete for and balance like
   * any other, until it holds no pending or running job; then its runner goes and its lock is given
   * up. Jobs keep the shard they were enqueued with, so no row is ever worked under two locks.
   * Finished jobs of a retired shard are swept by the kind's first shard, which also sends the
   * callbacks still due in it.
   */
  void followRetiredShards() {
    Map<String, Set<String>> active = jobShards.activeShards();
    Map<JobService, List<String>> emptied = new LinkedHashMap<>();
    Set<String> stillUsed = new java.util.HashSet<>();
    for (BaseService service : all()) {
      if (!(service instanceof JobService jobService)) {
        continue;
      }
      String kind = jobService.kind();
      List<String> current = shards.keysOf(kind);
      Set<String> busy = active.getOrDefault(kind, Set.of());
      for (String key : busy) {
        if (!current.contains(key) && jobService.addShard(key)) {
          LOG.infof(
              "%s: shard %s is not in the current mapping but has jobs; working it under its own"
                  + " lock until it is empty",
              kind, key);
        }
      }
      for (String key : jobService.shards()) {
        if (current.contains(key) || busy.contains(key)) {
          stillUsed.add(key);
        } else {
          emptied.computeIfAbsent(jobService, s -> new ArrayList<>()).add(key);
        }
      }
    }
    if (emptied.isEmpty()) {
      return;
    }
    // Stop their claims, then look once more: a job enqueued meanwhile (by a replica still on the
    // old mapping) keeps its shard's runner.
    emptied.forEach((service, keys) -> keys.forEach(service::beginDrain));
    Map<String, Set<String>> again;
    try {
      again = jobShards.activeShards();
    } catch (RuntimeException e) {
      emptied.forEach((service, keys) -> keys.forEach(service::endDrain));
      throw e;
    }
    List<String> gone = new ArrayList<>();
    emptied.forEach(
        (service, keys) -> {
          for (String key : keys) {
            boolean empty = !again.getOrDefault(service.kind(), Set.of()).contains(key);
            if (empty && service.removeShard(key)) {
              LOG.infof(
                  "%s: retired shard %s has no jobs left; giving its lock up", service.kind(), key);
              gone.add(key);
            } else {
              service.endDrain(key);
              stillUsed.add(key);
            }
          }
        });
    for (String key : gone) {
      if (!stillUsed.contains(key)) {
        locks.retire(key);
      }
    }
  }

  /** One daemon thread, named {@code name}, that runs scheduled work. */
  private static ScheduledExecutorService daemonScheduler(String name) {
    return Executors.newSingleThreadScheduledExecutor(
        r -> {
          Thread t = new Thread(r, name);
          t.setDaemon(true);
          return t;
        });
  }

  /** Says this replica is alive; never throws, so that the schedule goes on. */
  private void beat() {
    try {
      members.beat();
      if (heartbeatError != null) {
        heartbeatError = null;
        LOG.info("The members heartbeat works again");
      }
    } catch (Exception | Error e) {
      String message = String.valueOf(e);
      if (!message.equals(heartbeatError)) {
        heartbeatError = message;
        LOG.warnf("The members heartbeat failed; retrying every period: %s", message);
      }
    }
  }

  /**
   * Graceful handover: stop claiming, give running jobs up to {@code jobs.lock.handover-grace} to
   * finish, put the rest back to pending without counting a retry, and release the lock so the next
   * owner starts at once.
   */
  void onStop(@Observes ShutdownEvent event) {
    heartbeat.shutdownNow();
    balance.shutdownNow();
    try {
      boolean owner = locks.all().values().stream().anyMatch(lock -> lock.trust() != Trust.NONE);
      if (owner) {
        handOver(config.lock().handoverGrace());
      }
      handOff.releaseAll(owner);
    } catch (RuntimeException e) {
      LOG.errorf(e, "Graceful handover failed; the next owner recovers the running jobs");
    } finally {
      for (BaseService service : all()) {
        service.stop();
      }
      runners.values().forEach(Runner::stop);
      trustWatch.shutdownNow();
    }
  }

  /**
   * Stops every job service from claiming, waits up to {@code grace} for running jobs, then writes
   * what finished and puts the rest back to pending.
   *
   * @return how many jobs went back to pending
   */
  /**
   * Hands one shard over without stopping: every kind's runner of it stops claiming, running jobs
   * get up to {@code jobs.lock.handover-grace}, what finished is written and the rest goes back to
   * pending; then {@code whileDrained} runs (it gives the lock up) before the runners may claim
   * again, which they do only once they own the shard again.
   *
   * @return how many jobs went back to pending
   */
  int handOverShard(String shard, Runnable whileDrained) {
    List<JobService> jobServices =
        all().stream().filter(JobService.class::isInstance).map(JobService.class::cast).toList();
    jobServices.forEach(service -> service.beginDrain(shard));
    try {
      long deadline = System.nanoTime() + config.lock().handoverGrace().toNanos();
      for (JobService service : jobServices) {
        try {
          service.awaitTasks(shard, deadline);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
      int released = 0;
      for (JobService service : jobServices) {
        released += service.handBack(shard);
      }
      if (jobServices.stream().allMatch(service -> service.settled(shard))) {
        whileDrained.run();
      } else {
        // A task ignored its interrupt: its row stays running under this replica's epoch, and
        // the lock stays, so nobody else starts it while the thread runs; the next round retries.
        LOG.warnf(
            "Shard %s keeps a job whose thread ignored its interrupt; it is handed over once that"
                + " thread returns",
            shard);
      }
      return released;
    } finally {
      jobServices.forEach(service -> service.endDrain(shard));
    }
  }

  /**
   * The shards by what the balance spreads evenly: each kind's own shards, and the shard {@value
   * Shards#ALL} that unhashed kinds share under {@code none}, on its own.
   */
  Map<String, List<String>> shardGroups() {
    Map<String, List<String>> groups = new java.util.TreeMap<>();
    for (BaseService service : all()) {
      if (service instanceof JobService jobService) {
        for (String key : jobService.shards()) {
          String group = Shards.ALL.equals(key) ? Shards.ALL : jobService.kind();
          List<String> keys = groups.computeIfAbsent(group, g -> new ArrayList<>());
          if (!keys.contains(key)) {
            keys.add(key);
          }
        }
      }
    }
    return groups;
  }

  int handOver(Duration grace) {
    List<JobService> jobServices =
        all().stream().filter(JobService.class::isInstance).map(JobService.class::cast).toList();
    jobServices.forEach(JobService::beginDrain);
    long deadline = System.nanoTime() + grace.toNanos();
    for (JobService service : jobServices) {
      try {
        service.awaitTasks(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    int released = 0;
    for (JobService service : jobServices) {
      released += service.handBack();
    }
    return released;
  }

  /**
   * Adds a service. A service disabled by {@code jobs.services.<name>.enabled} (or, for a kind off
   * by default, not enabled there) is skipped.
   *
   * @return whether the service was registered
   * @throws IllegalStateException when another service already has the name
   */
  public boolean register(BaseService bean) {
    // The engine's wiring methods are package-private, which a client proxy in the kind's own
    // package cannot forward; wire the instance behind the proxy.
    BaseService service = ClientProxy.unwrap(bean);
    String name = service.name();
    boolean enabled =
        Optional.ofNullable(config.services().get(name))
            .flatMap(JobsConfig.ServiceOverrides::enabled)
            .orElse(service.enabledByDefault());
    if (!enabled) {
      LOG.infof("Service %s is disabled", name);
      return false;
    }
    synchronized (services) {
      if (services.containsKey(name)) {
        throw new IllegalStateException("two services are named " + name);
      }
      if (service instanceof JobService jobService) {
        List<String> keys = shards.keysOf(name);
        claimLockNames(name, keys);
        service.attachLock(locks.forShard(keys.get(0)));
        jobService.attach(
            context, context.settings().configured(name).maxConcurrent(), keys, locks::forShard);
      } else {
        service.attachLock(locks.primary());
      }
      services.put(name, service);
    }
    LOG.infof("Registered service %s", name);
    return true;
  }

  /**
   * Records the lock names of a kind's shards, refusing a name that another kind's shard already
   * has (a kind {@code zip_0} and shard 0 of {@code zip} would share one lock) or that a Lease
   * could not be called.
   */
  private void claimLockNames(String kind, List<String> keys) {
    if (kind.equals(Shards.ALL) && shards.mode() == Shards.Mode.PER_KIND) {
      throw new IllegalStateException(
          "a kind called " + Shards.ALL + " would own the unsharded jobs of every kind");
    }
    for (String key : keys) {
      String name = Shards.lockName(config.lock().name(), key);
      if (name.equals(config.lock().name() + "-members")) {
        throw new IllegalStateException(
            "shard " + key + " of kind " + kind + " would have the members Lease's name " + name);
      }
      if (name.endsWith("-") || name.length() > 253) {
        throw new IllegalStateException(
            "shard "
                + key
                + " of kind "
                + kind
                + " would have the lock name "
                + name
                + ", which a Lease may not have");
      }
      String owner = kind + " (shard " + key + ")";
      String before = lockNames.putIfAbsent(name, owner);
      if (before != null && !Shards.ALL.equals(key) && !before.equals(owner)) {
        throw new IllegalStateException(
            owner + " and " + before + " would share the lock " + name + "; rename a kind");
      }
    }
  }

  /** Removes a service and stops its threads; a no-op for an unknown name. */
  void unregister(String name) {
    BaseService removed = services.remove(name);
    if (removed != null) {
      removed.stop();
      lockNames.values().removeIf(owner -> owner.startsWith(name + " (shard "));
    }
    Runner runner = runners.remove(name);
    if (runner != null) {
      runner.stop();
    }
  }

  /** The registered service with this name. */
  public Optional<BaseService> service(String name) {
    return Optional.ofNullable(services.get(name));
  }

  /** The registered job service for a kind. */
  public Optional<JobService> jobService(String kind) {
    return service(kind).filter(JobService.class::isInstance).map(JobService.class::cast);
  }

  /** The kinds of every registered job service, sorted. */
  public List<String> kinds() {
    return all().stream()
        .filter(JobService.class::isInstance)
        .map(BaseService::name)
        .sorted()
        .toList();
  }

  /** Every registered service, in registration order. */
  public Collection<BaseService> all() {
    synchronized (services) {
      return List.copyOf(services.values());
    }
  }

  /** Wakes the job service of {@code kind}, every shard of it, if one is registered. */
  public void wake(String kind) {
    jobService(kind).ifPresent(JobService::requestWake);
  }

  /**
   * Wakes a service as a notification asks: its payload is the kind, then {@value
   * JobQueue#SHARD_SEPARATOR} and the shard unless that is {@value Shards#ALL}, then {@value
   * JobQueue#FROM_HEAD} when an older job became pending again (an admin retry) and the claim must
   * start from the head of the queue. A payload of the kind and {@value JobQueue#SETTINGS_CHANGED}
   * (a pause or resume) wakes every runner of the kind, which reads its settings again first.
   */
  public void wakeFor(String payload) {
    if (payload.endsWith(JobQueue.SETTINGS_CHANGED)) {
      jobService(payload.substring(0, payload.length() - JobQueue.SETTINGS_CHANGED.length()))
          .ifPresent(JobService::requestSettingsRead);
      return;
    }
    boolean fromHead = payload.endsWith(JobQueue.FROM_HEAD);
    String rest =
        fromHead ? payload.substring(0, payload.length() - JobQueue.FROM_HEAD.length()) : payload;
    int at = rest.indexOf(JobQueue.SHARD_SEPARATOR);
    String kind = at < 0 ? rest : rest.substring(0, at);
    String shard = at < 0 ? Shards.ALL : rest.substring(at + 1);
    wake(kind, shard, fromHead);
  }

  /** Wakes one shard's runner of a kind, or every one when {@code shard} is null. */
  private void wake(String kind, String shard, boolean fromHead) {
    jobService(kind)
        .ifPresent(
            service -> {
              if (shard == null) {
                if (fromHead) {
                  service.requestWakeFromHead();
                } else {
                  service.requestWake();
                }
              } else if (fromHead) {
                service.requestWakeFromHead(shard);
              } else {
                service.requestWake(shard);
              }
            });
  }

  /**
   * A job enqueued through this replica wakes its shard's runner here directly, without waiting for
   * the NOTIFY to travel through the database; a runner whose lock is not held stays asleep ({@link
   * ShardRunner#requestWake}). Runs once the enqueuing transaction committed.
   */
  void onEnqueued(@Observes(during = TransactionPhase.AFTER_SUCCESS) JobsEnqueued event) {
    if (config.wakeUps()) {
      wake(event.kind(), event.shard(), event.fromHead());
    }
  }

  /**
   * Whether {@link #onEnqueued} wakes the owner of {@code kind}'s {@code shard} here: wake-ups are
   * on, and this replica runs the shard and may claim for it.
   */
  @Override
  public boolean wakesHere(String kind, String shard) {
    return config.wakeUps() && jobService(kind).map(s -> s.claimsHere(shard)).orElse(false);
  }

  /**
   * A free thread of this replica's runner of {@code kind}'s {@code shard} for a job an enqueue
   * here is about to insert ({@code jobs.start-on-enqueue}); see {@link ShardRunner#reserveStart}.
   */
  @Override
  public LocalStarts.Reservation reserve(String kind, String shard) {
    if (!config.startOnEnqueue()) {
      return null;
    }
    return jobService(kind).map(s -> s.reserveStart(shard)).orElse(null);
  }

  /** Wakes every job service. */
  public void wakeAll() {
    for (BaseService service : all()) {
      if (service instanceof JobService jobService) {
        jobService.requestWake();
      }
    }
  }

  /**
   * The safety-net tick: supervises every service, each on its own thread, so that a service whose
   * run hangs (or throws anything at all) never delays the others. A service still busy with its
   * previous run is skipped. The tick waits for the runs it started for at most one tick interval.
   */
  @Scheduled(
      identity = "jobs-tick",
      every = "${jobs.tick-interval}",
      concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
  public void tick() {
    try {
      // On the balance thread: the tick itself does no database work.
      balance.execute(this::followRetiredShardsSafely);
    } catch (RejectedExecutionException e) {
      // Stopping.
    }
    List<Future<?>> started = new ArrayList<>();
    for (BaseService service : all()) {
      Runner runner = runners.computeIfAbsent(service.name(), Runner::new);
      Future<?> run = runner.submit(() -> superviseSafely(service));
      if (run != null) {
        started.add(run);
      } else if (stuck.add(service.name())) {
        LOG.warnf(
            "Service %s is still busy with an earlier run; the others go on without it",
            service.name());
      }
    }
    long deadline = System.nanoTime() + config.tickInterval().toNanos();
    for (Future<?> run : started) {
      try {
        run.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        // It goes on on its own thread; the next tick skips it until it returns.
      } catch (ExecutionException e) {
        LOG.errorf(e.getCause(), "A service run failed outside its own error handling");
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /**
   * The trust watch: as soon as a shard's lock can no longer be trusted (a renewal is overdue past
   * the renew deadline, or another replica holds it), that shard's running jobs are interrupted,
   * without waiting for the next tick and without the database. The next tick writes what became of
   * them.
   */
  void watchTrust() {
    for (BaseService service : all()) {
      if (service instanceof JobService jobService) {
        jobService.abandonUntrusted();
      }
    }
  }

  private void superviseSafely(BaseService service) {
    String name = service.name();
    try {
      service.supervise();
      if (failing.remove(name)) {
        LOG.infof("Service %s runs again", name);
      }
    } catch (Throwable e) {
      // Log the first failure of a streak with its stack; repeat failures only at debug level.
      if (failing.add(name)) {
        LOG.errorf(e, "Service %s failed its run; retrying every tick", name);
      } else {
        LOG.debugf(e, "Service %s failed again", name);
      }
    } finally {
      if (stuck.remove(name)) {
        LOG.infof("Service %s finished its long run", name);
      }
    }
  }

  /** One service's own thread for its supervised runs; runs at most one at a time. */
  private static final class Runner {
    private final ExecutorService thread;
    private final AtomicBoolean busy = new AtomicBoolean();

    Runner(String name) {
      this.thread =
          Executors.newSingleThreadExecutor(
              r -> {
                Thread t = new Thread(r, "jobs-" + name + "-tick");
                t.setDaemon(true);
                return t;
              });
    }

    /** Starts {@code run} unless the previous one is still going; null then. */
    Future<?> submit(Runnable run) {
      if (!busy.compareAndSet(false, true)) {
        return null;
      }
      try {
        return thread.submit(
            () -> {
              try {
                run.run();
              } finally {
                busy.set(false);
              }
            });
      } catch (RejectedExecutionException e) {
        busy.set(false);
        return null;
      }
    }

    void stop() {
      thread.shutdownNow();
    }
  }
}
