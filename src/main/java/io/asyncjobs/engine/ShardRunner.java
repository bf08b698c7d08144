package io.asyncjobs.engine;

import io.asyncjobs.config.ClaimOrder;
import io.asyncjobs.config.ServiceSettings;
import io.asyncjobs.lock.OwnerLock;
import io.asyncjobs.lock.Trust;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.LocalStarts;
import io.asyncjobs.queue.StoreException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import org.jboss.logging.Logger;

/**
 * One ownership of one kind: the jobs of one shard, processed under that shard's lock and epoch. A
 * kind's {@link JobService} keeps the hooks and has one runner per shard of the kind; with the
 * unsharded default that is one runner under the one owner lock, today's engine.
 *
 * <p>The runner holds the shard's state ({@link ShardState}, the run lock, the settings) and orders
 * the roles that do the work. Each {@link #runOnce()} is these steps, in order: reap finished tasks
 * ({@link Reaper}), write reported progress ({@link ProgressWriter}), recover orphans ({@link
 * OrphanRecoverer}), refill up to the concurrency limit ({@link Refiller}; with claim-ahead, beyond
 * it by what the threads finish within the window; such jobs wait for a thread), sweep expired jobs
 * ({@link Sweeper}; the kind's sweeping runner only: finished rows belong to no owner), and start
 * the callbacks due ({@link CallbackStarter}). How far a run may go depends on the lock's {@link
 * Trust}: claiming, recovering and sweeping only under {@link Trust#CLAIM}; writing outcomes under
 * {@link Trust#FINISH} too; under {@link Trust#NONE} running work is interrupted and handed back. A
 * task leaves this runner's books only once what became of it is committed.
 */
final class ShardRunner {

  private static final Logger LOG = Logger.getLogger(ShardRunner.class);

  /** Longest a wake-up waits for running tasks to finish alongside those already finished. */
  private static final long LINGER_NANOS = TimeUnit.MICROSECONDS.toNanos(300);

  private final JobService service;
  private final String kind;
  private final String shard;
  private final EngineContext context;
  private final WorkerPool pool;
  private final int initialThreads;

  /** Whether this runner sweeps the kind's expired jobs (one runner of each kind does). */
  private final boolean sweeps;

  /** The lock, the tasks and the wake-up flags the roles share. */
  private final ShardState state;

  private final Reaper reaper;
  private final ProgressWriter progress;
  private final OrphanRecoverer recoverer;
  private final Refiller refiller;
  private final CallbackStarter callbacks;

  /** Only one run at a time: from the tick, a wake-up or a test. */
  private final ReentrantLock runLock = new ReentrantLock();

  /** Whether the last sweep left expired jobs; a wake-up then sweeps on. Under the run lock. */
  private boolean sweepBehind;

  /** Set when the kind was paused or resumed: the next wake-up reads the settings first. */
  private final AtomicBoolean settingsChanged = new AtomicBoolean();

  /** The settings the last {@link #runOnce()} read; wake-ups use them between ticks. */
  private volatile ServiceSettings lastSettings;

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
    this.sweeps = sweeps;
    this.initialThreads = initialThreads;
    this.pool = new WorkerPool(threadName(kind, shard), initialThreads);
    this.state = new ShardState(kind, shard, lock, context.traces());
    Outcomes outcomes = new Outcomes(kind, context);
    this.reaper = new Reaper(context, state, outcomes);
    this.progress = new ProgressWriter(context, state);
    this.recoverer = new OrphanRecoverer(context, state);
    this.refiller = new Refiller(service, context, state, outcomes, pool);
    this.callbacks = new CallbackStarter(context, state, service::mappedShards);
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
    return state.lock();
  }

  void attachLock(OwnerLock ownerLock) {
    state.attachLock(ownerLock);
  }

  /**
   * The steps, in order, as far as the lock's trust allows: reap, progress, recover orphans,
   * refill, sweep, callbacks. Never runs concurrently with itself.
   */
  TickResult runOnce() {
    runLock.lock();
    long startNanos = System.nanoTime();
    try {
      state.claimWanted.set(false); // this run claims
      Instant now = context.clock().now();
      settingsChanged.set(false); // read now
      ServiceSettings settings = readSettings();
      OwnerLock owner = state.lock();
      Trust trust = owner.trust();
      long epoch = owner.epoch();
      Tally tally = new Tally();
      reaper.runOnce(trust, epoch, settings, now, tally);
      if (trust != Trust.NONE) {
        progress.runOnce(now);
      }
      if (trust == Trust.CLAIM) {
        recoverer.runOnce(settings, epoch, now, tally);
        refiller.runOnce(settings, epoch, now, tally);
        if (sweeps) {
          sweep(now, tally);
        }
        callbacks.runOnce(epoch, now);
        if (sweeps) {
          callbacks.runRetiredOnce(epoch, now);
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
      state.claimWanted.set(false); // this run claims
      ServiceSettings settings =
          settingsChanged.getAndSet(false) ? readSettings() : lastTickSettings();
      Instant now = context.clock().now();
      OwnerLock owner = state.lock();
      Trust trust = owner.trust();
      long epoch = owner.epoch();
      Tally tally = new Tally();
      if (trust == Trust.NONE) {
        return tally.result();
      }
      // Claims in turns, or under a running quota, take a statement of their own; the outcomes are
      // written on their own then, and so they are while the kind is paused (nothing is claimed).
      boolean claimCarries =
          trust == Trust.CLAIM
              && settings.claimOrder() != ClaimOrder.FAIR
              && settings.maxRunningPerOwner() == 0
              && !settings.paused();
      // Read before the reap forgets the tasks it writes: whether one of them has a callback.
      boolean callbacksToTell = state.callbacksInFlight();
      Reaper.Riders riders = reaper.reapOnWake(claimCarries, epoch, settings, now, tally);
      if (trust != Trust.CLAIM) {
        return tally.result();
      }
      refiller.releaseDueOnWake(epoch, now, tally);
      boolean fenced = refiller.claimOnWake(riders, settings, owner, epoch, now, tally);
      if (!fenced && callbacksToTell && tally.done + tally.failed > 0) {
        callbacks.runOnce(epoch, now); // the jobs just ended are told at once, not at the tick
      }
      // A claim asked for meanwhile goes first: the wake-up it released runs next and sweeps on.
      if (sweepBehind && !fenced && !state.draining && !state.claimWanted.get()) {
        try {
          sweep(now, tally);
        } catch (StoreException e) {
          LOG.debugf(
              "%s: a wake-up's sweep failed, the next tick sweeps: %s",
              state.label(), e.getMessage());
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
   * Holds a free thread for a job an enqueue on this replica is about to insert ({@link
   * LocalStarts}): takes the run lock without waiting, so that no claim, recovery, handover or
   * drain runs until the reservation is closed, and keeps it only when the shard may start the job
   * now: the lock lets it claim, the kind is neither paused nor draining, claims go in order
   * without a running quota per owner (turns and quotas are the claim's to decide), the settings of
   * the last tick are current, and a thread is free (no task in flight or straggling holds it, so
   * no job claimed ahead waits for it either). Null otherwise, and before the first tick.
   */
  LocalStarts.Reservation reserveStart() {
    if (!runLock.tryLock()) {
      return null; // a run is claiming, or recovering: the job waits for it as pending
    }
    boolean kept = false;
    try {
      ServiceSettings settings = lastSettings;
      OwnerLock owner = state.lock();
      if (settings == null
          || settingsChanged.get()
          || state.draining
          || settings.paused()
          || settings.claimOrder() == ClaimOrder.FAIR
          || settings.maxRunningPerOwner() > 0
          || owner.trust() != Trust.CLAIM) {
        return null;
      }
      state.stragglers.removeIf(Task::returned);
      if (state.inFlight.size() + state.stragglers.size() >= settings.maxConcurrent()) {
        return null;
      }
      Start start = new Start(owner, owner.epoch());
      kept = true;
      return start;
    } finally {
      if (!kept) {
        runLock.unlock();
      }
    }
  }

  /** A thread held for one enqueued job, under the run lock, until it is closed. */
  private final class Start implements LocalStarts.Reservation {

    private final OwnerLock owner;
    private final long epoch;
    private final long heldAt = context.traces().now();
    private boolean closed;

    Start(OwnerLock owner, long epoch) {
      this.owner = owner;
      this.epoch = epoch;
    }

    @Override
    public void fenced() {
      owner.superseded(epoch);
    }

    @Override
    public long epoch() {
      return epoch;
    }

    @Override
    public void started(Job job) {
      refiller.startEnqueued(job, epoch, heldAt, context.traces().now());
    }

    @Override
    public void close() {
      if (!closed) {
        closed = true;
        runLock.unlock();
      }
    }
  }

  /**
   * The sweep step, under the run lock: sweeps within the budget and, while expired jobs remain,
   * asks for a wake-up at once, which claims first and then sweeps on. A claim asked for meanwhile
   * (an enqueue, a finished task) ends the sweep within the job it is cleaning up. With wake-ups
   * off, the sweep gets one budget per tick.
   */
  private void sweep(Instant now, Tally tally) {
    // Cleared first, so that a sweep that throws leaves the rest to the next tick.
    sweepBehind = false;
    sweepBehind =
        service
            .sweeper()
            .sweep(
                now,
                tally,
                context.sweepBudget(),
                () -> context.wakeUps() && state.claimWanted.get());
    if (sweepBehind && context.wakeUps()) {
      state.wakeSignal.release(); // a wake-up to sweep on, not a claim: claimWanted stays as it is
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

  /** Routine counts at debug level; anything unusual (recoveries, fencing, cleanup) at info. */
  private void logIfNotEmpty(TickResult result) {
    if (result.isEmpty()) {
      return;
    }
    if (result.isUnusual()) {
      LOG.infof("%s: %s", state.label(), result);
    } else {
      LOG.debugf("%s: %s", state.label(), result);
    }
  }

  /**
   * This replica does not own the shard (or no longer does): running tasks are interrupted;
   * finished outcomes are still written under their own epochs (a row still running under that
   * epoch was touched by nobody else, so the outcome is the truth), and interrupted tasks go back
   * to pending once their threads have returned.
   */
  void whenNotOwner() {
    if (state.inFlight.isEmpty()) {
      return;
    }
    reaper.abandonWork();
    if (!runLock.tryLock()) {
      return;
    }
    try {
      Tally tally = new Tally();
      reaper.settle(lastTickSettings(), context.clock().now(), tally);
      logIfNotEmpty(tally.result());
    } finally {
      runLock.unlock();
    }
  }

  /** See {@link Reaper#abandonWork()}: needs no database and no run lock. */
  void abandonWork() {
    reaper.abandonWork();
  }

  /**
   * Stops claiming new jobs (shutdown or a handover has begun); running ones go on. Returns once a
   * run that was claiming when the drain began has started its tasks, so that whoever waits for the
   * running tasks next sees them too (a job claimed a moment later would otherwise be interrupted
   * and run again by the next owner).
   */
  void beginDrain() {
    state.draining = true;
    runLock.lock();
    runLock.unlock();
  }

  /** Claims again after {@link #beginDrain()}. */
  void endDrain() {
    state.draining = false;
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
      return reaper.handBack(lastTickSettings(), exiting);
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
    return Reaper.awaitReturned(tasks(), deadlineNanos);
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
    state.stragglers.removeIf(Task::returned);
    return state.inFlight.isEmpty() && state.stragglers.isEmpty();
  }

  /** Jobs this runner is working on now (or whose outcome is not yet written). */
  int inFlightCount() {
    return state.inFlight.size();
  }

  /** Whether a claim was asked for since the last run that claimed; for tests. */
  boolean claimWanted() {
    return state.claimWanted.get();
  }

  /** Worker threads waiting at the start gate now. */
  int waitingAtStartGate() {
    return state.gate.waiting();
  }

  /** Tasks counted in the start gate now. */
  int begunAtStartGate() {
    return state.gate.begun();
  }

  /** The tasks in flight now. */
  List<Task> tasks() {
    return List.copyOf(state.inFlight.values());
  }

  /** The task of one job, in flight or a straggler, or null. */
  Task task(UUID uid) {
    Task task = state.inFlight.get(uid);
    if (task == null) {
      task = state.stragglers.stream().filter(t -> t.job.uid.equals(uid)).findFirst().orElse(null);
    }
    return task;
  }

  /**
   * Asks for a run as soon as possible, on this runner's own thread. Coalesces. A runner whose lock
   * is not held (another replica owns the shard) is left asleep: its wake-up thread would find that
   * it may do nothing ({@link #wakeLoop}), once for every enqueue and notification of the kind.
   * When it takes the lock, its first tick claims from the head of the queue.
   */
  void requestWake() {
    if (mayWake()) {
      state.requestWake();
    }
  }

  /**
   * Asks for a run that claims from the head of the queue: an older job became pending again (an
   * admin retry, a handover), which a wake-up claiming after its cursor would pass over. Left
   * asleep as {@link #requestWake} is.
   */
  void requestWakeFromHead() {
    if (mayWake()) {
      state.requestWakeFromHead();
    }
  }

  /** Whether a wake-up here could do anything: the lock is held, if only to finish (FINISH). */
  private boolean mayWake() {
    return state.lock().trust() != Trust.NONE;
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
        state.wakeSignal.acquire();
        lingerForStragglers();
        state.wakeSignal.drainPermits();
        if (mayWake()) {
          wakeOnce();
        }
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException | Error e) {
        // An Error from a kind's code must not end this thread: wake-ups would stop for good.
        LOG.errorf(e, "%s: run after a wake-up failed; the next tick retries", state.label());
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
      for (Task task : state.inFlight.values()) {
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
      state.wakeSignal.tryAcquire(left, TimeUnit.NANOSECONDS);
    }
  }
}
