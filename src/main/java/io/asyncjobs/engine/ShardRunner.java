package io.asyncjobs.engine;

import io.asyncjobs.config.ClaimOrder;
import io.asyncjobs.config.ServiceSettings;
import io.asyncjobs.lock.OwnerLock;
import io.asyncjobs.lock.Trust;
import io.asyncjobs.queue.Completion;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobClaims;
import io.asyncjobs.queue.JobOutcomes;
import io.asyncjobs.queue.JobPriority;
import io.asyncjobs.queue.JobRecovery;
import io.asyncjobs.queue.StoreException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import org.jboss.logging.Logger;

/**
 * One ownership of one kind: the jobs of one shard, processed under that shard's lock and epoch. A
 * kind's {@link JobService} keeps the hooks and has one runner per shard of the kind; with the
 * unsharded default that is one runner under the one owner lock, today's engine.
 *
 * <p>Each {@link #runOnce()} is four steps, in order: reap finished tasks, recover orphans, refill
 * up to the concurrency limit (and, with claim-ahead, beyond it by what the threads finish within
 * the window; such jobs wait for a thread), sweep expired jobs (the kind's sweeping runner only:
 * finished rows belong to no owner). How far a run may go depends on the lock's {@link Trust}:
 * claiming, recovering and sweeping only under {@link Trust#CLAIM}; writing outcomes under {@link
 * Trust#FINISH} too; under {@link Trust#NONE} running work is interrupted and handed back. A task
 * leaves this runner's books only once what became of it is committed.
 */
final class ShardRunner {

  private static final Logger LOG = Logger.getLogger(ShardRunner.class);

  /** Shortest interval between two progress writes of one job. */
  private static final Duration PROGRESS_INTERVAL = Duration.ofSeconds(1);

  /** Longest a wake-up waits for running tasks to finish alongside those already finished. */
  private static final long LINGER_NANOS = TimeUnit.MICROSECONDS.toNanos(300);

  /** How long a handover waits for interrupted tasks to return before it releases their jobs. */
  private static final Duration HANDBACK_WAIT = Duration.ofSeconds(2);

  /**
   * Before every job in the claim's order: the wake-up claim cursor before anything was claimed.
   */
  private static final JobClaims.ClaimCursor NO_CURSOR =
      JobClaims.ClaimCursor.before(JobPriority.MAX + 1);

  private final JobService service;
  private final String kind;
  private final String shard;
  private final EngineContext context;
  private final Outcomes outcomes;
  private final WorkerPool pool;
  private final int initialThreads;

  /** Whether this runner sweeps the kind's expired jobs (one runner of each kind does). */
  private final boolean sweeps;

  private volatile OwnerLock lock;

  /** Only one run at a time: from the tick, a wake-up or a test. */
  private final ReentrantLock runLock = new ReentrantLock();

  /** Tasks started by this runner whose fate is not yet committed. */
  private final Map<UUID, Task> inFlight = new ConcurrentHashMap<>();

  /**
   * Tasks settled (written, or no longer this runner's) whose threads have not yet returned; they
   * hold a slot, so a task that ignores its interrupt never lets more jobs run than allowed.
   */
  private final List<Task> stragglers = new CopyOnWriteArrayList<>();

  private final Semaphore wakeSignal = new Semaphore(0);

  /** Whether the last sweep left expired jobs; a wake-up then sweeps on. Under the run lock. */
  private boolean sweepBehind;

  /**
   * Whether a claim was asked for (an enqueue, a finished task, a handover) since a run last
   * claimed. A sweep gives way to it; the wake-ups a sweep asks for itself leave it alone.
   */
  private final AtomicBoolean claimWanted = new AtomicBoolean();

  /**
   * Set when older pending jobs appeared (a retry, a rescue): the next wake-up claims from the
   * head.
   */
  private final AtomicBoolean rewind = new AtomicBoolean();

  /** Set when the kind was paused or resumed: the next wake-up reads the settings first. */
  private final AtomicBoolean settingsChanged = new AtomicBoolean();

  /**
   * The last job (by priority, then uid) claimed under {@link #cursorEpoch}. Wake-ups claim after
   * it; the tick claims from the head of the queue and so also takes older jobs that became pending
   * again.
   */
  private JobClaims.ClaimCursor claimCursor = NO_CURSOR;

  /** The owner the last claim in turns ({@code fair}) ended with; the next one starts after it. */
  private String turnCursor = "";

  private long cursorEpoch;

  /** The settings the last {@link #runOnce()} read; wake-ups use them between ticks. */
  private volatile ServiceSettings lastSettings;

  /** Set while the application shuts down or the shard is handed over: nothing new is claimed. */
  private volatile boolean draining;

  private volatile Thread waker;

  ShardRunner(
      JobService service,
      String shard,
      EngineContext context,
      OwnerLock lock,
      boolean sweeps,
      int initialThreads) {
    this.service = service;
    this.kind = service.kind();
    this.shard = shard;
    this.context = context;
    this.lock = lock;
    this.sweeps = sweeps;
    this.outcomes = new Outcomes(kind, context);
    this.initialThreads = initialThreads;
    this.pool = new WorkerPool(threadName(kind, shard), initialThreads);
  }

  /** Worker threads are named after the kind, and after the shard when that is not the kind's. */
  private static String threadName(String kind, String shard) {
    return shard.startsWith(kind + "-") ? shard : kind;
  }

  /** Starts the wake-up thread, when wake-ups are on. */
  void start() {
    if (context.wakeUps()) {
      Thread thread = new Thread(this::wakeLoop, "jobs-" + threadName(kind, shard) + "-waker");
      thread.setDaemon(true);
      this.waker = thread;
      thread.start();
    }
  }

  String shard() {
    return shard;
  }

  /** The threads the runner was started with; a runner added later starts with as many. */
  int threads() {
    return initialThreads;
  }

  OwnerLock lock() {
    return lock;
  }

  void attachLock(OwnerLock ownerLock) {
    this.lock = ownerLock;
  }

  /**
   * The four steps, in order, as far as the lock's trust allows. Never runs concurrently with
   * itself.
   */
  TickResult runOnce() {
    runLock.lock();
    long startNanos = System.nanoTime();
    try {
      claimWanted.set(false); // this run claims
      Instant now = context.clock().now();
      settingsChanged.set(false); // read now
      ServiceSettings settings = readSettings();
      OwnerLock owner = lock;
      Trust trust = owner.trust();
      long epoch = owner.epoch();
      Tally tally = new Tally();
      if (trust == Trust.NONE) {
        abandonWork();
      } else {
        if (trust == Trust.CLAIM) {
          adopt(epoch, now, tally);
        }
        stopOverdue(settings, now, tally);
      }
      settle(settings, now, tally);
      if (trust != Trust.NONE) {
        recordProgress(now);
      }
      if (trust == Trust.CLAIM) {
        recoverOrphans(settings, epoch, now, tally);
        releaseDue(epoch, now);
        refill(settings, epoch, now, tally);
        if (sweeps) {
          sweep(now, tally);
        }
        deliverCallbacks(epoch, now);
        if (sweeps) {
          deliverRetiredCallbacks(epoch, now);
        }
      }
      TickResult result = tally.result();
      logIfNotEmpty(result);
      context.metrics().ran(kind, result);
      return result;
    } finally {
      context.metrics().tickTook(kind, Duration.ofNanos(System.nanoTime() - startNanos));
      runLock.unlock();
    }
  }

  /**
   * The wake-up path, run when a job of this shard was enqueued or one of its tasks finished, or
   * when the last sweep left expired jobs: reap and refill, with the settings of the last tick,
   * then sweep on if the last sweep was behind. Finished outcomes of the current epoch and the
   * claim that refills their slots go in one statement. Orphans do not appear between ticks in a
   * way that needs an immediate answer, so the tick alone recovers them.
   */
  TickResult wakeOnce() {
    runLock.lock();
    try {
      claimWanted.set(false); // this run claims
      ServiceSettings settings =
          settingsChanged.getAndSet(false) ? readSettings() : lastTickSettings();
      Instant now = context.clock().now();
      OwnerLock owner = lock;
      Trust trust = owner.trust();
      long epoch = owner.epoch();
      Tally tally = new Tally();
      if (trust == Trust.NONE) {
        return tally.result();
      }
      List<Task> combined = new ArrayList<>();
      List<Completion> completions = new ArrayList<>();
      boolean fair = settings.claimOrder() == ClaimOrder.FAIR;
      int cap = settings.maxRunningPerOwner();
      // Claims in turns, or under a running quota, take a statement of their own; the outcomes are
      // written on their own then, and so they are while the kind is paused (nothing is claimed).
      if (trust == Trust.CLAIM && !fair && cap == 0 && !settings.paused()) {
        for (Task task : inFlight.values()) {
          Completion outcome = task.returned() ? task.outcome() : null;
          if (outcome != null
              && !outcome.isRetry()
              && !outcome.transientFailure()
              && task.epoch() == epoch) {
            combined.add(task);
            completions.add(Outcomes.storable(outcome));
          }
        }
      }
      List<Task> rest = new ArrayList<>(inFlight.values());
      rest.removeAll(combined);
      forget(outcomes.write(rest, settings, now, tally));
      if (trust != Trust.CLAIM) {
        return tally.result();
      }
      if (tally.rescheduled > 0) {
        dueWanted.set(true); // arms the timer for the retry the write just scheduled
      }
      if (dueWanted.getAndSet(false)) {
        try {
          releaseDue(epoch, now);
          rewind.set(true); // the jobs made due may sort before the cursor
        } catch (StoreException e) {
          LOG.debugf(
              "%s: releasing due jobs failed, the next tick does: %s", label(), e.getMessage());
        }
      }
      int capacity = draining || settings.paused() ? 0 : claimRoom(settings) + combined.size();
      // A wake-up with no room keeps the request for the head for the next one that has room.
      JobClaims.ClaimCursor after =
          capacity > 0 && rewind.getAndSet(false) ? NO_CURSOR : cursor(epoch);
      if (after.priority() < JobPriority.DEFAULT) {
        // Jobs of the default priority enqueued meanwhile sort before this cursor and wake nobody.
        after = NO_CURSOR;
      }
      boolean fenced = false;
      JobTraces traces = context.traces();
      try {
        List<Job> claimed;
        long claimStart = traces.now();
        JobClaims.ClaimRequest claim =
            new JobClaims.ClaimRequest(kind, shard, Math.max(0, capacity), epoch, now, after);
        if (fair) {
          JobClaims.Claimed c = claimInTurns(capacity, epoch, now, cap);
          claimed = c.jobs();
          fenced = c.fenced();
        } else if (cap > 0) {
          JobClaims.Claimed c =
              context
                  .jobClaims()
                  .claimCapped(
                      new JobClaims.ClaimRequest(
                          kind, shard, Math.max(0, capacity), epoch, now, null),
                      cap);
          claimed = c.jobs();
          fenced = c.fenced();
        } else if (combined.isEmpty()) {
          JobClaims.Claimed c = context.jobClaims().claimMany(claim);
          claimed = c.jobs();
          fenced = c.fenced();
        } else {
          JobClaims.CompleteAndClaim both =
              context.jobClaims().completeAndClaimMany(completions, settings.retention(), claim);
          long written = traces.now();
          for (Task task : combined) {
            traces.step(task.span, JobTraces.OUTCOME, claimStart, written);
          }
          outcomes.tally(completions, both.written(), epoch, tally);
          forget(combined);
          claimed = both.claimed();
          fenced = both.fenced();
        }
        long claimEnd = traces.now();
        if (fenced) {
          owner.superseded(epoch);
        }
        start(claimed, epoch, now, claimStart, claimEnd);
        tally.claimed += claimed.size();
      } catch (StoreException e) {
        // The outcomes stay in flight; the next run writes them.
        LOG.debugf("%s: a wake-up's write failed: %s", label(), e.getMessage());
      }
      if (!fenced && tally.done + tally.failed > 0) {
        deliverCallbacks(epoch, now); // the jobs just ended are told at once, not at the tick
      }
      // A claim asked for meanwhile goes first: the wake-up it released runs next and sweeps on.
      if (sweepBehind && !fenced && !draining && !claimWanted.get()) {
        try {
          sweep(now, tally);
        } catch (StoreException e) {
          LOG.debugf(
              "%s: a wake-up's sweep failed, the next tick sweeps: %s", label(), e.getMessage());
        }
      }
      TickResult result = tally.result();
      context.metrics().ran(kind, result);
      return result;
    } finally {
      runLock.unlock();
    }
  }

  /**
   * Step 4, under the run lock: sweeps within the budget and, while expired jobs remain, asks for a
   * wake-up at once, which claims first and then sweeps on. A claim asked for meanwhile (an
   * enqueue, a finished task) ends the sweep within the job it is cleaning up. With wake-ups off,
   * the sweep gets one budget per tick.
   */
  private void sweep(Instant now, Tally tally) {
    // Cleared first, so that a sweep that throws leaves the rest to the next tick.
    sweepBehind = false;
    sweepBehind =
        service
            .sweeper()
            .sweep(now, tally, context.sweepBudget(), () -> context.wakeUps() && claimWanted.get());
    if (sweepBehind && context.wakeUps()) {
      wakeSignal.release(); // a wake-up to sweep on, not a claim: claimWanted stays as it is
    }
  }

  /** Sweeps every expired job of the kind now, under this runner's run lock; see the service's. */
  void sweepAll(Tally tally) {
    runLock.lock();
    try {
      service.sweeper().sweepAll(context.clock().now(), tally);
    } finally {
      runLock.unlock();
    }
  }

  /** The kind, and the shard when it is not the one shard of the unsharded default. */
  private String label() {
    return io.asyncjobs.config.Shards.ALL.equals(shard) ? kind : kind + " (shard " + shard + ")";
  }

  /** Routine counts at debug level; anything unusual (recoveries, fencing, cleanup) at info. */
  private void logIfNotEmpty(TickResult result) {
    if (result.isEmpty()) {
      return;
    }
    if (result.isUnusual()) {
      LOG.infof("%s: %s", label(), result);
    } else {
      LOG.debugf("%s: %s", label(), result);
    }
  }

  /**
   * This replica does not own the shard (or no longer does): running tasks are interrupted;
   * finished outcomes are still written under their own epochs (a row still running under that
   * epoch was touched by nobody else, so the outcome is the truth), and interrupted tasks go back
   * to pending once their threads have returned.
   */
  void whenNotOwner() {
    if (inFlight.isEmpty()) {
      return;
    }
    abandonWork();
    if (!runLock.tryLock()) {
      return;
    }
    try {
      Tally tally = new Tally();
      settle(lastTickSettings(), context.clock().now(), tally);
      logIfNotEmpty(tally.result());
    } finally {
      runLock.unlock();
    }
  }

  /**
   * Interrupts every running task because the lock can no longer be trusted. Needs no database and
   * no run lock, so it works while a run hangs on a database that went away.
   */
  void abandonWork() {
    int abandoned = 0;
    for (Task task : inFlight.values()) {
      if (task.working()) {
        task.abandon();
        abandoned++;
      }
    }
    if (abandoned > 0) {
      LOG.warnf(
          "%s: not the owner any more; interrupted %d running job(s), which go back to pending once"
              + " they stop",
          label(), abandoned);
    }
  }

  /**
   * Stops claiming new jobs (shutdown or a handover has begun); running ones go on. Returns once a
   * run that was claiming when the drain began has started its tasks, so that whoever waits for the
   * running tasks next sees them too (a job claimed a moment later would otherwise be interrupted
   * and run again by the next owner).
   */
  void beginDrain() {
    draining = true;
    runLock.lock();
    runLock.unlock();
  }

  /** Claims again after {@link #beginDrain()}. */
  void endDrain() {
    draining = false;
  }

  /**
   * The last step of a handover: interrupts the tasks still running and waits a moment for them to
   * return, writes the outcomes of those that finished, and puts the rest back to pending without
   * counting a retry (a job whose cancel was requested fails as cancelled instead).
   *
   * @return how many jobs went back to pending
   */
  int handBack() {
    return handBack(true);
  }

  /**
   * As {@link #handBack()}; with {@code exiting} false (a shard handed over for balance, in a
   * process that goes on) a task that ignored its interrupt keeps its row running under this
   * runner's epoch instead of being put back, so that nobody else can start it while its thread
   * still runs; the caller keeps the lock until {@link #settled()}.
   */
  int handBack(boolean exiting) {
    runLock.lock();
    try {
      ServiceSettings settings = lastTickSettings();
      List<Task> stopped = new ArrayList<>();
      for (Task task : inFlight.values()) {
        if (task.working()) {
          task.abandon();
          stopped.add(task);
        }
      }
      try {
        awaitReturned(stopped, System.nanoTime() + HANDBACK_WAIT.toNanos());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      Instant now = context.clock().now();
      Tally tally = new Tally();
      forget(outcomes.write(inFlight.values(), settings, now, tally));
      // Tasks that ignored their interrupt: the process is about to exit, which ends them.
      Map<Long, List<UUID>> stuck = new HashMap<>();
      for (Task task : inFlight.values()) {
        if (task.abandoned()) {
          stuck.computeIfAbsent(task.epoch(), e -> new ArrayList<>()).add(task.job.uid);
        }
      }
      if (exiting) {
        for (Map.Entry<Long, List<UUID>> group : stuck.entrySet()) {
          tally.released +=
              context
                  .jobOutcomes()
                  .releaseMany(group.getValue(), group.getKey(), settings.retention(), now)
                  .size();
        }
        inFlight.values().forEach(context.traces()::end);
        inFlight.clear();
      }
      if (tally.released > 0 || tally.done + tally.failed > 0) {
        LOG.infof(
            "%s: handed over: %d finished job(s) written, %d put back to pending",
            label(), tally.done + tally.failed, tally.released);
      }
      return tally.released;
    } finally {
      runLock.unlock();
    }
  }

  /**
   * Waits until every task in flight now has returned from {@code process}, or the deadline.
   *
   * @return false when some were still running at the deadline
   */
  boolean awaitReturned(long deadlineNanos) throws InterruptedException {
    return awaitReturned(tasks(), deadlineNanos);
  }

  private static boolean awaitReturned(List<Task> tasks, long deadlineNanos)
      throws InterruptedException {
    for (Task task : tasks) {
      long left = deadlineNanos - System.nanoTime();
      if (left <= 0 || !task.returnedLatch.await(left, TimeUnit.NANOSECONDS)) {
        return false;
      }
    }
    return true;
  }

  /** The settings the last tick read, or the current ones before the first tick. */
  private ServiceSettings lastTickSettings() {
    ServiceSettings settings = lastSettings;
    return settings == null ? readSettings() : settings;
  }

  /** The settings in force now, kept for the wake-ups until the next tick. */
  private ServiceSettings readSettings() {
    ServiceSettings settings = context.settings().effective(kind);
    lastSettings = settings;
    return settings;
  }

  /** Whether nothing of this runner is in flight and every thread it started has returned. */
  boolean settled() {
    stragglers.removeIf(Task::returned);
    return inFlight.isEmpty() && stragglers.isEmpty();
  }

  /** Jobs this runner is working on now (or whose outcome is not yet written). */
  int inFlightCount() {
    return inFlight.size();
  }

  /** The tasks in flight now. */
  List<Task> tasks() {
    return List.copyOf(inFlight.values());
  }

  /** The task of one job, in flight or a straggler, or null. */
  Task task(UUID uid) {
    Task task = inFlight.get(uid);
    if (task == null) {
      task = stragglers.stream().filter(t -> t.job.uid.equals(uid)).findFirst().orElse(null);
    }
    return task;
  }

  /** Asks for a run as soon as possible, on this runner's own thread. Coalesces. */
  void requestWake() {
    claimWanted.set(true);
    wakeSignal.release();
  }

  /**
   * Asks for a run that claims from the head of the queue: an older job became pending again (an
   * admin retry, a handover), which a wake-up claiming after its cursor would pass over.
   */
  void requestWakeFromHead() {
    rewind.set(true);
    claimWanted.set(true);
    wakeSignal.release();
  }

  /**
   * Asks for a run that reads the settings again before it claims, from the head of the queue: an
   * admin paused or resumed the kind, and a resumed kind should claim at once, not at the next
   * tick.
   */
  void requestSettingsRead() {
    settingsChanged.set(true);
    requestWakeFromHead();
  }

  // ---- step 1: reap ----------------------------------------------------------------------

  /**
   * Tasks whose rows were claimed under an earlier epoch of this replica and that still run: after
   * the lock was taken back, their rows get the new epoch, so that they may finish. Nobody else
   * touched a row that is still running under the epoch its task claimed it with.
   */
  private void adopt(long epoch, Instant now, Tally tally) {
    Map<UUID, long[]> earlier = new HashMap<>();
    for (Task task : inFlight.values()) {
      if (task.working() && task.epoch() != epoch) {
        task.adopting(epoch);
        earlier.put(task.job.uid, task.epochs());
      }
    }
    if (earlier.isEmpty()) {
      return;
    }
    JobRecovery.Adopted adopted;
    try {
      adopted = context.jobRecovery().adoptMany(earlier, epoch, now);
    } catch (StoreException e) {
      LOG.debugf(
          "%s: adopting running jobs failed, retrying next run: %s", label(), e.getMessage());
      return;
    }
    if (adopted.fenced()) {
      lock.superseded(epoch);
      return;
    }
    int lost = 0;
    for (UUID uid : earlier.keySet()) {
      Task task = inFlight.get(uid);
      if (task == null) {
        continue;
      }
      if (adopted.adopted().contains(uid)) {
        task.adoptedUnder(epoch);
        tally.adopted++;
      } else {
        task.abandon();
        lost++;
      }
    }
    LOG.infof(
        "%s: kept %d running job(s) under the new epoch %d; %d had been taken meanwhile and were"
            + " interrupted",
        label(), adopted.adopted().size(), epoch, lost);
  }

  /** Interrupts tasks past their timeout and tasks whose cancel was requested. */
  private void stopOverdue(ServiceSettings settings, Instant now, Tally tally) {
    List<UUID> working = new ArrayList<>();
    for (Task task : inFlight.values()) {
      if (task.working()) {
        working.add(task.job.uid);
      }
    }
    if (working.isEmpty()) {
      return;
    }
    Set<UUID> cancelled;
    try {
      cancelled = context.jobOutcomes().cancelRequestedMany(working);
    } catch (StoreException e) {
      cancelled = Set.of();
    }
    for (UUID uid : working) {
      Task task = inFlight.get(uid);
      if (task == null || !task.working()) {
        continue;
      }
      Instant began = task.startedAt(); // null while it waits for a thread: no timeout yet
      if (cancelled.contains(uid)) {
        task.stop("cancelled on request", now);
      } else if (began != null
          && Duration.between(began, now).compareTo(settings.jobTimeout()) > 0) {
        task.stop("timed out after " + settings.jobTimeout().toSeconds() + " s", now);
        tally.timedOut++;
      }
    }
  }

  /** Writes what became of every ready task and forgets those settled. */
  private void settle(ServiceSettings settings, Instant now, Tally tally) {
    forget(outcomes.write(inFlight.values(), settings, now, tally));
  }

  /**
   * Removes settled tasks and ends their spans; those whose threads still run keep a slot until
   * they return.
   */
  private void forget(List<Task> settled) {
    for (Task task : settled) {
      context.traces().end(task);
      inFlight.remove(task.job.uid, task);
      if (!task.returned()) {
        stragglers.add(task);
      }
    }
  }

  /**
   * Writes the progress running tasks reported since the last write, for each job at most once per
   * {@link #PROGRESS_INTERVAL}, under the epoch each row carries.
   */
  private void recordProgress(Instant now) {
    Map<Long, List<JobOutcomes.ProgressReport>> byEpoch = new HashMap<>();
    for (Task task : inFlight.values()) {
      if (!task.working()
          || (task.progressWrittenAt != null
              && Duration.between(task.progressWrittenAt, now).compareTo(PROGRESS_INTERVAL) < 0)) {
        continue;
      }
      JobOutcomes.ProgressReport report = task.progress.getAndSet(null);
      if (report != null) {
        byEpoch.computeIfAbsent(task.epoch(), e -> new ArrayList<>()).add(report);
        task.progressWrittenAt = now;
      }
    }
    for (Map.Entry<Long, List<JobOutcomes.ProgressReport>> group : byEpoch.entrySet()) {
      try {
        context.jobOutcomes().progressMany(group.getValue(), group.getKey(), now);
      } catch (StoreException e) {
        LOG.debugf("%s: a progress write failed: %s", label(), e.getMessage());
      }
    }
  }

  // ---- step 2: recover orphans -----------------------------------------------------------

  private void recoverOrphans(ServiceSettings settings, long epoch, Instant now, Tally tally) {
    JobRecovery.RescueCounts counts =
        context
            .jobRecovery()
            .rescueMany(
                kind,
                shard,
                inFlight.keySet(),
                epoch,
                lock.earlierHoldersSettled(),
                settings.maxRetries(),
                settings.retention(),
                now);
    if (counts.requeued() + counts.failed() > 0) {
      LOG.infof(
          "%s: recovered orphaned jobs: %d back to pending, %d failed after max-retries %d",
          label(), counts.requeued(), counts.failed(), settings.maxRetries());
      rewind.set(true);
    }
    tally.requeued += counts.requeued();
    tally.abandoned += counts.failed();
  }

  // ---- step 3: refill --------------------------------------------------------------------

  /** One timer thread for every runner's next due delayed job; it only asks for a wake-up. */
  private static final java.util.concurrent.ScheduledExecutorService DUE_TIMER =
      java.util.concurrent.Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "jobs-due-timer");
            t.setDaemon(true);
            return t;
          });

  /** Set by the due timer: the next wake-up releases due jobs first and claims from the head. */
  private final AtomicBoolean dueWanted = new AtomicBoolean();

  /** When the armed timer fires, or null when none is armed. */
  private volatile Instant timerAt;

  /**
   * Makes the shard's delayed jobs due whose time has come, so the refill that follows can claim
   * them, and arms a timer for the earliest one still ahead when it falls before the next tick: a
   * delayed job starts at its time, not at the tick after it, with no polling in between.
   */
  private void releaseDue(long epoch, Instant now) {
    JobClaims.Released released = context.jobClaims().releaseDue(kind, shard, epoch, now);
    Instant next = released.nextDue();
    if (next == null) {
      return;
    }
    long delayMillis = Math.max(1, Duration.between(now, next).toMillis());
    Instant armed = timerAt;
    if (armed != null && !armed.isAfter(next) && armed.isAfter(now)) {
      return; // an earlier or equal timer is already armed
    }
    timerAt = next;
    DUE_TIMER.schedule(
        () -> {
          timerAt = null;
          dueWanted.set(true);
          requestWake();
        },
        delayMillis,
        TimeUnit.MILLISECONDS);
  }

  /** Starts the callbacks due in this shard; a failure leaves them to the next tick. */
  private void deliverCallbacks(long epoch, Instant now) {
    try {
      context.deliveries().deliverDue(kind, shard, epoch, now);
    } catch (RuntimeException e) {
      LOG.debugf("%s: starting callbacks failed, the next tick does: %s", label(), e.getMessage());
    }
  }

  /**
   * The sweeping runner's share: the callbacks due in shards the current mapping does not name. A
   * retired shard's runner goes once it has no pending or running job, however many of its
   * callbacks are still due; like its finished rows, those belong to the kind's first shard then.
   */
  private void deliverRetiredCallbacks(long epoch, Instant now) {
    try {
      context.deliveries().deliverRetired(kind, service.mappedShards(), epoch, now);
    } catch (RuntimeException e) {
      LOG.debugf(
          "%s: starting retired shards' callbacks failed, the next tick does: %s",
          label(), e.getMessage());
    }
  }

  private void refill(ServiceSettings settings, long epoch, Instant now, Tally tally) {
    pool.resize(settings.maxConcurrent());
    // A paused kind claims nothing; what runs finishes, and the steps before and after go on.
    int capacity = draining || settings.paused() ? 0 : claimRoom(settings);
    if (capacity <= 0) {
      return;
    }
    int cap = settings.maxRunningPerOwner();
    JobClaims.ClaimRequest head =
        new JobClaims.ClaimRequest(kind, shard, capacity, epoch, now, null);
    JobClaims.Claimed claimed;
    long claimStart = context.traces().now();
    if (settings.claimOrder() == ClaimOrder.FAIR) {
      claimed = claimInTurns(capacity, epoch, now, cap);
    } else if (cap > 0) {
      claimed = context.jobClaims().claimCapped(head, cap);
    } else {
      claimed = context.jobClaims().claimMany(head);
    }
    long claimEnd = context.traces().now();
    if (claimed.fenced()) {
      lock.superseded(epoch);
      return;
    }
    start(claimed.jobs(), epoch, now, claimStart, claimEnd);
    tally.claimed += claimed.jobs().size();
  }

  /**
   * How many jobs a claim may take now: the threads not held by a task in flight or by a settled
   * one whose thread has not returned, and the room ahead of them the claim-ahead window allows.
   */
  private int claimRoom(ServiceSettings settings) {
    stragglers.removeIf(Task::returned);
    return settings.maxConcurrent()
        + service.aheadRoom(settings)
        - inFlight.size()
        - stragglers.size();
  }

  /**
   * Claims up to {@code room} jobs in turns between owners: one statement per priority level that
   * has due jobs, from the top, until the room is filled or nothing is left. Each statement's turns
   * start after the owner the previous one ended with.
   */
  private JobClaims.Claimed claimInTurns(int room, long epoch, Instant now, int runningCap) {
    List<Job> all = new ArrayList<>();
    while (all.size() < room) {
      JobClaims.Claimed c =
          context
              .jobClaims()
              .claimFair(
                  new JobClaims.FairClaimRequest(
                      kind, shard, room - all.size(), epoch, now, turnCursor, runningCap));
      if (c.fenced()) {
        return new JobClaims.Claimed(true, all);
      }
      if (c.jobs().isEmpty()) {
        break;
      }
      all.addAll(c.jobs());
      // The turns list each owner once in rotation order before any owner's second job: the last
      // owner to appear is the farthest one served, after which the next turns begin.
      java.util.LinkedHashSet<String> served = new java.util.LinkedHashSet<>();
      c.jobs().forEach(job -> served.add(JobClaims.ownerKey(job)));
      turnCursor = List.copyOf(served).get(served.size() - 1);
    }
    return new JobClaims.Claimed(false, all);
  }

  /** The wake-up claim cursor for {@code epoch}; a new epoch starts from the head again. */
  private JobClaims.ClaimCursor cursor(long epoch) {
    if (epoch != cursorEpoch) {
      cursorEpoch = epoch;
      claimCursor = NO_CURSOR;
    }
    return claimCursor;
  }

  /**
   * Starts a task for each job claimed; {@code claimStart} and {@code claimEnd} are the claim's
   * times for the jobs' spans.
   */
  private void start(List<Job> claimed, long epoch, Instant now, long claimStart, long claimEnd) {
    EngineMetrics metrics = context.metrics();
    JobTraces traces = context.traces();
    for (Job job : claimed) {
      metrics.claimed(kind, job, now);
      if (epoch == cursorEpoch && claimCursor.precedes(job)) {
        claimCursor = new JobClaims.ClaimCursor(job.priority, job.uid);
      }
      Task task = new Task(job, now, epoch, traces.claimed(job, shard, claimStart, claimEnd));
      inFlight.put(job.uid, task);
      task.future = pool.submit(() -> run(task));
    }
  }

  /** Runs the kind's {@code process} for the task, then asks for a wake-up to write its outcome. */
  private void run(Task task) {
    if (!service.execute(task)) {
      return; // stopped or abandoned while it waited for a thread
    }
    if (context.wakeUps()) {
      requestWake();
    }
  }

  // ---- lifecycle -------------------------------------------------------------------------

  void stop() {
    Thread thread = waker;
    if (thread != null) {
      thread.interrupt();
    }
    pool.shutdownNow();
  }

  private void wakeLoop() {
    while (!Thread.currentThread().isInterrupted()) {
      try {
        wakeSignal.acquire();
        lingerForStragglers();
        wakeSignal.drainPermits();
        if (lock.trust() != Trust.NONE) {
          wakeOnce();
        }
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException | Error e) {
        // An Error from a kind's code must not end this thread: wake-ups would stop for good.
        LOG.errorf(e, "%s: run after a wake-up failed; the next tick retries", label());
      }
    }
  }

  /**
   * When some tasks have finished and others are still running, waits a moment (at most {@link
   * #LINGER_NANOS}) for the rest, so that one statement writes them all instead of one statement
   * per task. A wake-up with nothing finished (an enqueue) does not wait.
   */
  private void lingerForStragglers() throws InterruptedException {
    long deadline = System.nanoTime() + LINGER_NANOS;
    while (true) {
      int finished = 0;
      int running = 0;
      for (Task task : inFlight.values()) {
        if (task.returned()) {
          finished++;
        } else {
          running++;
        }
      }
      long left = deadline - System.nanoTime();
      if (finished == 0 || running == 0 || left <= 0) {
        return;
      }
      wakeSignal.tryAcquire(left, TimeUnit.NANOSECONDS);
    }
  }
}
