package io.asyncjobs.engine;

import io.asyncjobs.config.ServiceSettings;
import io.asyncjobs.config.Shards;
import io.asyncjobs.lock.Trust;
import io.asyncjobs.queue.Completion;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobStore;
import java.sql.SQLException;
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
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.jboss.logging.Logger;

/**
 * A service that processes the jobs of one kind. A kind's author writes {@link #kind()}, {@link
 * #title()}, {@link #process(Job)} and {@link #cleanup(Job)}; registration, retention, concurrency,
 * timeouts and crash recovery come from here.
 *
 * <p>Each {@link #runOnce()} is four steps, in order: reap finished tasks, recover orphans, refill
 * up to the concurrency limit (and, with claim-ahead, beyond it by what the threads finish within
 * the window; such jobs wait for a thread), sweep expired jobs. Tasks outlive the run that started
 * them; the run itself only does database work and returns quickly. How far a run may go depends on
 * the owner lock's {@link Trust}: claiming, recovering and sweeping only under {@link Trust#CLAIM};
 * writing outcomes under {@link Trust#FINISH} too; under {@link Trust#NONE} running work is
 * interrupted and handed back. A task leaves this process's books only once what became of it is
 * committed, so an outcome is never lost to a failed write.
 */
public abstract class JobService extends BaseService {

  private static final Logger LOG = Logger.getLogger(JobService.class);

  /** The task whose {@code process} runs on the current thread, for {@link #reportProgress}. */
  private static final ThreadLocal<Task> CURRENT = new ThreadLocal<>();

  /** Shortest interval between two progress writes of one job. */
  private static final Duration PROGRESS_INTERVAL = Duration.ofSeconds(1);

  /** Longest a wake-up waits for running tasks to finish alongside those already finished. */
  private static final long LINGER_NANOS = TimeUnit.MICROSECONDS.toNanos(300);

  /** How long a handover waits for interrupted tasks to return before it releases their jobs. */
  private static final Duration HANDBACK_WAIT = Duration.ofSeconds(2);

  /** Smaller than every job id: the wake-up claim cursor before anything was claimed. */
  private static final UUID NO_CURSOR = new UUID(0, 0);

  /**
   * The result key naming the job's downloadable artifact: a path relative to the data directory.
   * The download route serves that file; the status view never shows the path itself.
   */
  public static final String RESULT_FILE = "file";

  /** The shortest run time the claim-ahead room assumes, so that it stays bounded. */
  private static final long MIN_RUN_NANOS = TimeUnit.MICROSECONDS.toNanos(1);

  /**
   * The kind's recent run time of {@code process}, in nanoseconds: an average that weighs the
   * latest run by one eighth; zero before any run.
   */
  private final AtomicLong typicalRunNanos = new AtomicLong();

  /** A claim-ahead window a test set instead of the configured one, or null. */
  private volatile Duration claimAheadSetByTest;

  /** Only one run at a time: from the tick, a wake-up or a test. */
  private final ReentrantLock runLock = new ReentrantLock();

  /** Tasks started by this process whose fate is not yet committed. */
  private final Map<UUID, Task> inFlight = new ConcurrentHashMap<>();

  /**
   * Tasks settled (written, or no longer this process's) whose threads have not yet returned; they
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

  /**
   * The newest uid claimed under {@link #cursorEpoch}. Wake-ups claim after it; the tick claims
   * from the head of the queue and so also takes older jobs that became pending again.
   */
  private UUID claimCursor = NO_CURSOR;

  private long cursorEpoch;

  /** The settings the last {@link #runOnce()} read; wake-ups use them between ticks. */
  private volatile ServiceSettings lastSettings;

  /** Set while the application shuts down: nothing new is claimed. */
  private volatile boolean draining;

  private volatile EngineContext context;
  private volatile WorkerPool pool;
  private volatile Thread waker;
  private volatile Outcomes outcomes;
  private volatile Sweeper sweeper;

  /** The job kind this service processes; also its name in configuration and metrics. */
  public abstract String kind();

  /** A human title for admin pages. */
  public abstract String title();

  /**
   * The shard whose rows this service claims and recovers: the one shard of the unsharded default,
   * under the one owner lock.
   */
  public final String shard() {
    return Shards.ALL;
  }

  /**
   * Does the work of one job. May block; runs on the service's own threads, at most {@code
   * max-concurrent} at once, and is interrupted when the job times out, is cancelled, or this
   * replica stops being the owner.
   *
   * @return the result, stored as JSON; the numbers under {@code bytes_in}, {@code bytes_out} and
   *     {@code item_count} also fill the job's stat columns, and {@link #RESULT_FILE} names the
   *     file callers download
   * @throws Exception to fail the job; its type and message become the job's error. A failure
   *     caused by the database connection going away puts the job back to pending instead (with a
   *     retry counted), since it says nothing about the job.
   */
  protected abstract Map<String, Object> process(Job job) throws Exception;

  /**
   * Removes what the job left on disk, before its row is deleted for having expired. Throwing keeps
   * the row; a later sweep tries again.
   */
  protected abstract void cleanup(Job job) throws Exception;

  @Override
  public String name() {
    return kind();
  }

  /**
   * Reports how far the job that {@code process} is working on has come; callers see it in the
   * job's status. Cheap to call often: the owner writes it at most about once a second per job.
   * Outside {@code process} it does nothing.
   *
   * @param fraction the part done, 0 to 1, or null when unknown
   * @param itemsDone items (files, pages, hits) done so far, or null
   */
  protected final void reportProgress(Double fraction, Long itemsDone) {
    if (fraction != null && !(fraction >= 0 && fraction <= 1)) {
      throw new IllegalArgumentException("progress fraction must be between 0 and 1: " + fraction);
    }
    if (itemsDone != null && itemsDone < 0) {
      throw new IllegalArgumentException("items done must not be negative: " + itemsDone);
    }
    Task task = CURRENT.get();
    if (task != null) {
      task.progress.set(new JobStore.ProgressReport(task.job.uid, fraction, itemsDone));
    }
  }

  /**
   * The fencing epoch the row of the job that {@code process} works on carries now: the claim's, or
   * a later one the owner adopted it under after taking the lock back. Good for labelling what a
   * job did; to guard an effect, use {@link #whileHeld}, since an adoption may change the epoch
   * between reading it and the statement it guards. Outside {@code process}, zero.
   */
  protected final long currentEpoch() {
    Task task = CURRENT.get();
    return task == null ? 0 : task.epoch();
  }

  /** An effect guarded by the epochs the job's row may carry; see {@link #whileHeld}. */
  @FunctionalInterface
  protected interface EpochGuarded {
    /**
     * Applies the effect only where the job is still running under one of {@code epochs} ({@code
     * ... AND j.status = 'running' AND j.epoch = ANY (?)}).
     *
     * @return whether it landed
     */
    boolean apply(long[] epochs) throws SQLException;
  }

  /**
   * Applies an effect that must land only while this replica still holds the job that {@code
   * process} works on, and says whether it landed. Reading {@link #currentEpoch} and then guarding
   * a statement with it races the owner: after taking its lock back, the owner adopts the row under
   * its new epoch, and a statement checked against the old one misses the row although the job
   * never left this replica. Here {@code effect} gets every epoch the row may carry, a set that
   * grows before an adoption runs; when it did not land and an adoption came in between, it is
   * applied again with the new set, so it must be safe to apply twice when it did not land. Outside
   * {@code process}, the effect gets no epochs.
   */
  protected final boolean whileHeld(EpochGuarded effect) throws SQLException {
    Task task = CURRENT.get();
    long[] epochs = task == null ? new long[0] : task.epochs();
    while (true) {
      if (effect.apply(epochs)) {
        return true;
      }
      long[] now = task == null ? epochs : task.epochs();
      if (now == epochs) {
        return false;
      }
      epochs = now;
    }
  }

  /**
   * The four steps, in order, as far as the lock's trust allows. Never runs concurrently with
   * itself.
   */
  @Override
  public TickResult runOnce() {
    EngineContext ctx = requireContext();
    runLock.lock();
    long startNanos = System.nanoTime();
    try {
      claimWanted.set(false); // this run claims
      Instant now = ctx.clock().now();
      ServiceSettings settings = ctx.settings().effective(kind());
      lastSettings = settings;
      Trust trust = ownerLock().trust();
      long epoch = ownerLock().epoch();
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
        refill(settings, epoch, now, tally);
        sweep(ctx, now, tally);
      }
      TickResult result = tally.result();
      logIfNotEmpty(result);
      ctx.metrics().ran(kind(), result);
      return result;
    } finally {
      ctx.metrics().tickTook(kind(), Duration.ofNanos(System.nanoTime() - startNanos));
      runLock.unlock();
    }
  }

  /**
   * The wake-up path, run when a job of this kind was enqueued or one of its tasks finished, or
   * when the last sweep left expired jobs: reap and refill, with the settings of the last tick,
   * then sweep on if the last sweep was behind. Finished outcomes of the current epoch and the
   * claim that refills their slots go in one statement. Orphans do not appear between ticks in a
   * way that needs an immediate answer, so the tick alone recovers them.
   */
  TickResult wakeOnce() {
    EngineContext ctx = requireContext();
    runLock.lock();
    try {
      claimWanted.set(false); // this run claims
      ServiceSettings settings = lastTickSettings(ctx);
      Instant now = ctx.clock().now();
      Trust trust = ownerLock().trust();
      long epoch = ownerLock().epoch();
      Tally tally = new Tally();
      if (trust == Trust.NONE) {
        return tally.result();
      }
      List<Task> combined = new ArrayList<>();
      List<Completion> completions = new ArrayList<>();
      if (trust == Trust.CLAIM) {
        for (Task task : inFlight.values()) {
          Completion outcome = task.returned() ? task.outcome() : null;
          if (outcome != null && !outcome.isRetry() && task.epoch() == epoch) {
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
      int capacity = draining ? 0 : claimRoom(settings) + combined.size();
      UUID after = rewind.getAndSet(false) ? NO_CURSOR : cursor(epoch);
      boolean fenced = false;
      try {
        List<Job> claimed;
        JobStore.ClaimRequest claim =
            new JobStore.ClaimRequest(kind(), shard(), Math.max(0, capacity), epoch, now, after);
        if (combined.isEmpty()) {
          JobStore.Claimed c = ctx.store().claimMany(claim);
          claimed = c.jobs();
          fenced = c.fenced();
        } else {
          JobStore.CompleteAndClaim both =
              ctx.store().completeAndClaimMany(completions, settings.retention(), claim);
          outcomes.tally(completions, both.written(), epoch, tally);
          forget(combined);
          claimed = both.claimed();
          fenced = both.fenced();
        }
        if (fenced) {
          ownerLock().superseded(epoch);
        }
        start(claimed, epoch, now);
        tally.claimed += claimed.size();
      } catch (JobStore.StoreException e) {
        // The outcomes stay in flight; the next run writes them.
        LOG.debugf("%s: a wake-up's write failed: %s", kind(), e.getMessage());
      }
      // A claim asked for meanwhile goes first: the wake-up it released runs next and sweeps on.
      if (sweepBehind && !fenced && !draining && !claimWanted.get()) {
        try {
          sweep(ctx, now, tally);
        } catch (JobStore.StoreException e) {
          LOG.debugf(
              "%s: a wake-up's sweep failed, the next tick sweeps: %s", kind(), e.getMessage());
        }
      }
      TickResult result = tally.result();
      ctx.metrics().ran(kind(), result);
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
  private void sweep(EngineContext ctx, Instant now, Tally tally) {
    // Cleared first, so that a sweep that throws leaves the rest to the next tick.
    sweepBehind = false;
    sweepBehind =
        sweeper.sweep(now, tally, ctx.sweepBudget(), () -> ctx.wakeUps() && claimWanted.get());
    if (sweepBehind && ctx.wakeUps()) {
      wakeSignal.release(); // a wake-up to sweep on, not a claim: claimWanted stays as it is
    }
  }

  /** Routine counts at debug level; anything unusual (recoveries, fencing, cleanup) at info. */
  private void logIfNotEmpty(TickResult result) {
    if (result.isEmpty()) {
      return;
    }
    if (result.isUnusual()) {
      LOG.infof("%s: %s", kind(), result);
    } else {
      LOG.debugf("%s: %s", kind(), result);
    }
  }

  /**
   * This replica does not own (or no longer owns): running tasks are interrupted; finished outcomes
   * are still written under their own epochs (a row still running under that epoch was touched by
   * nobody else, so the outcome is the truth), and interrupted tasks go back to pending once their
   * threads have returned.
   */
  @Override
  protected void whenNotOwner() {
    if (inFlight.isEmpty()) {
      return;
    }
    abandonWork();
    if (!runLock.tryLock()) {
      return;
    }
    try {
      EngineContext ctx = requireContext();
      Tally tally = new Tally();
      settle(lastTickSettings(ctx), ctx.clock().now(), tally);
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
          kind(), abandoned);
    }
  }

  /**
   * Stops claiming new jobs (shutdown has begun); running ones go on. Returns once a run that was
   * claiming when the drain began has started its tasks, so that whoever waits for the running
   * tasks next sees them too (a job claimed a moment later would otherwise be interrupted and run
   * again by the next owner).
   */
  void beginDrain() {
    draining = true;
    runLock.lock();
    runLock.unlock();
  }

  /** Claims again after {@link #beginDrain()}; for tests that hand over without stopping. */
  void endDrain() {
    draining = false;
  }

  /**
   * The last step of a graceful shutdown: interrupts the tasks still running and waits a moment for
   * them to return, writes the outcomes of those that finished, and puts the rest back to pending
   * without counting a retry (a job whose cancel was requested fails as cancelled instead).
   *
   * @return how many jobs went back to pending
   */
  int handBack() {
    EngineContext ctx = requireContext();
    runLock.lock();
    try {
      ServiceSettings settings = lastTickSettings(ctx);
      List<Task> stopped = new ArrayList<>();
      for (Task task : inFlight.values()) {
        if (task.working()) {
          task.abandon();
          stopped.add(task);
        }
      }
      awaitReturn(stopped, HANDBACK_WAIT);
      Instant now = ctx.clock().now();
      Tally tally = new Tally();
      forget(outcomes.write(inFlight.values(), settings, now, tally));
      // Tasks that ignored their interrupt: the process is about to exit, which ends them.
      Map<Long, List<UUID>> stuck = new HashMap<>();
      for (Task task : inFlight.values()) {
        if (task.abandoned()) {
          stuck.computeIfAbsent(task.epoch(), e -> new ArrayList<>()).add(task.job.uid);
        }
      }
      for (Map.Entry<Long, List<UUID>> group : stuck.entrySet()) {
        tally.released +=
            ctx.store()
                .releaseMany(group.getValue(), group.getKey(), settings.retention(), now)
                .size();
      }
      inFlight.clear();
      if (tally.released > 0 || tally.done + tally.failed > 0) {
        LOG.infof(
            "%s: handed over: %d finished job(s) written, %d put back to pending",
            kind(), tally.done + tally.failed, tally.released);
      }
      return tally.released;
    } finally {
      runLock.unlock();
    }
  }

  private static void awaitReturn(List<Task> tasks, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    try {
      for (Task task : tasks) {
        long left = deadline - System.nanoTime();
        if (left <= 0 || !task.returnedLatch.await(left, TimeUnit.NANOSECONDS)) {
          return;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The settings the last tick read, or the current ones before the first tick. */
  private ServiceSettings lastTickSettings(EngineContext ctx) {
    ServiceSettings settings = lastSettings;
    if (settings == null) {
      settings = ctx.settings().effective(kind());
      lastSettings = settings;
    }
    return settings;
  }

  /** Jobs this process is working on now (or whose outcome is not yet written). */
  public int inFlightCount() {
    return inFlight.size();
  }

  /**
   * Waits until every task started so far has returned from {@code process}.
   *
   * @return false when some were still running at the deadline
   */
  public boolean awaitTasks(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    for (Task task : List.copyOf(inFlight.values())) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      if (!task.returnedLatch.await(left, TimeUnit.NANOSECONDS)) {
        return false;
      }
    }
    return true;
  }

  /**
   * Waits until the task of one job has returned from {@code process}.
   *
   * @return true when it has, or when this process has no task for the job
   */
  boolean awaitTask(UUID uid, Duration timeout) throws InterruptedException {
    Task task = inFlight.get(uid);
    if (task == null) {
      task = stragglers.stream().filter(t -> t.job.uid.equals(uid)).findFirst().orElse(null);
    }
    if (task == null) {
      return true;
    }
    return task.returnedLatch.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
  }

  /** Asks for a run as soon as possible, on this service's own thread. Coalesces. */
  public void requestWake() {
    claimWanted.set(true);
    wakeSignal.release();
  }

  /**
   * Asks for a run that claims from the head of the queue: an older job became pending again (an
   * admin retry, a handover), which a wake-up claiming after its cursor would pass over.
   */
  public void requestWakeFromHead() {
    rewind.set(true);
    claimWanted.set(true);
    wakeSignal.release();
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
    JobStore.Adopted adopted;
    try {
      adopted = requireContext().store().adoptMany(earlier, epoch, now);
    } catch (JobStore.StoreException e) {
      LOG.debugf("%s: adopting running jobs failed, retrying next run: %s", kind(), e.getMessage());
      return;
    }
    if (adopted.fenced()) {
      ownerLock().superseded(epoch);
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
        kind(), adopted.adopted().size(), epoch, lost);
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
      cancelled = requireContext().store().cancelRequestedMany(working);
    } catch (JobStore.StoreException e) {
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

  /** Removes settled tasks; those whose threads still run keep a slot until they return. */
  private void forget(List<Task> settled) {
    for (Task task : settled) {
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
    Map<Long, List<JobStore.ProgressReport>> byEpoch = new HashMap<>();
    for (Task task : inFlight.values()) {
      if (!task.working()
          || (task.progressWrittenAt != null
              && Duration.between(task.progressWrittenAt, now).compareTo(PROGRESS_INTERVAL) < 0)) {
        continue;
      }
      JobStore.ProgressReport report = task.progress.getAndSet(null);
      if (report != null) {
        byEpoch.computeIfAbsent(task.epoch(), e -> new ArrayList<>()).add(report);
        task.progressWrittenAt = now;
      }
    }
    for (Map.Entry<Long, List<JobStore.ProgressReport>> group : byEpoch.entrySet()) {
      try {
        requireContext().store().progressMany(group.getValue(), group.getKey(), now);
      } catch (JobStore.StoreException e) {
        LOG.debugf("%s: a progress write failed: %s", kind(), e.getMessage());
      }
    }
  }

  // ---- step 2: recover orphans -----------------------------------------------------------

  private void recoverOrphans(ServiceSettings settings, long epoch, Instant now, Tally tally) {
    JobStore.RescueCounts counts =
        requireContext()
            .store()
            .rescueMany(
                kind(),
                shard(),
                inFlight.keySet(),
                epoch,
                ownerLock().earlierHoldersSettled(),
                settings.maxRetries(),
                settings.retention(),
                now);
    if (counts.requeued() + counts.failed() > 0) {
      LOG.infof(
          "%s: recovered orphaned jobs: %d back to pending, %d failed after max-retries %d",
          kind(), counts.requeued(), counts.failed(), settings.maxRetries());
      rewind.set(true);
    }
    tally.requeued += counts.requeued();
    tally.abandoned += counts.failed();
  }

  // ---- step 3: refill --------------------------------------------------------------------

  private void refill(ServiceSettings settings, long epoch, Instant now, Tally tally) {
    pool.resize(settings.maxConcurrent());
    int capacity = draining ? 0 : claimRoom(settings);
    if (capacity <= 0) {
      return;
    }
    JobStore.Claimed claimed =
        requireContext()
            .store()
            .claimMany(new JobStore.ClaimRequest(kind(), shard(), capacity, epoch, now, null));
    if (claimed.fenced()) {
      ownerLock().superseded(epoch);
      return;
    }
    start(claimed.jobs(), epoch, now);
    tally.claimed += claimed.jobs().size();
  }

  /**
   * How many jobs a claim may take now: the threads not held by a task in flight or by a settled
   * one whose thread has not returned, and the room ahead of them that {@link #aheadRoom} allows.
   */
  private int claimRoom(ServiceSettings settings) {
    stragglers.removeIf(Task::returned);
    return settings.maxConcurrent() + aheadRoom(settings) - inFlight.size() - stragglers.size();
  }

  /**
   * How many jobs may wait claimed for a thread: as many as the threads finish within the claim-
   * ahead window at the kind's recent run time, at most the configured bound. None before a run
   * time is known, so a kind of long jobs never holds jobs it cannot start.
   */
  private int aheadRoom(ServiceSettings settings) {
    EngineContext ctx = requireContext();
    long typical = typicalRunNanos.get();
    Duration set = claimAheadSetByTest;
    long window = (set != null ? set : settings.claimAhead()).toNanos();
    if (typical <= 0 || window <= 0 || ctx.claimAheadMax() <= 0) {
      return 0;
    }
    long jobs = settings.maxConcurrent() * (window / Math.max(typical, MIN_RUN_NANOS));
    return (int) Math.min(ctx.claimAheadMax(), jobs);
  }

  /** The wake-up claim cursor for {@code epoch}; a new epoch starts from the head again. */
  private UUID cursor(long epoch) {
    if (epoch != cursorEpoch) {
      cursorEpoch = epoch;
      claimCursor = NO_CURSOR;
    }
    return claimCursor;
  }

  private void start(List<Job> claimed, long epoch, Instant now) {
    WorkerPool workers = pool;
    EngineMetrics metrics = requireContext().metrics();
    for (Job job : claimed) {
      metrics.claimed(kind(), job, now);
      // uuids order as unsigned bytes in PostgreSQL, which is the order of their text.
      if (epoch == cursorEpoch && job.uid.toString().compareTo(claimCursor.toString()) > 0) {
        claimCursor = job.uid;
      }
      Task task = new Task(job, now, epoch);
      inFlight.put(job.uid, task);
      task.future = workers.submit(() -> run(task));
    }
  }

  /**
   * Runs {@code process} and records its outcome on the task itself before anything is told the
   * task returned: the run that this wakes must find the outcome complete.
   */
  private void run(Task task) {
    if (!task.begin(requireContext().clock().now())) {
      return; // stopped or abandoned while it waited for a thread
    }
    Map<String, Object> result = null;
    Throwable failure = null;
    CURRENT.set(task);
    try {
      result = process(task.job);
    } catch (Throwable e) { // an Error (say a stack overflow) fails the job like an exception
      failure = e;
    } finally {
      CURRENT.remove();
      long ran = task.ranNanos(System.nanoTime());
      typicalRunNanos.getAndUpdate(avg -> avg == 0 ? Math.max(1, ran) : avg + (ran - avg) / 8);
      task.finish(result, failure, requireContext().clock().now());
      if (requireContext().wakeUps()) {
        requestWake();
      }
    }
  }

  // ---- step 4: sweep ---------------------------------------------------------------------

  /**
   * Sweeps now rather than on the next tick: every expired finished job of this kind, batch after
   * batch, goes through {@link #cleanup} and is deleted, until none is left. The admin CLI's prune
   * calls it from a process that never owns the lock. That is safe because the sweep touches only
   * finished rows, which no owner writes any more; the owner's own sweep may take the same rows at
   * the same moment, and then a job's cleanup runs twice, which every cleanup must bear anyway (one
   * that threw is called again later).
   *
   * @return the jobs deleted ({@link TickResult#swept()}) and those kept because their cleanup
   *     threw ({@link TickResult#cleanupErrors()}); every other count is zero
   */
  public TickResult sweepExpired() {
    EngineContext ctx = requireContext();
    runLock.lock();
    try {
      Tally tally = new Tally();
      sweeper.sweepAll(ctx.clock().now(), tally);
      return tally.result();
    } finally {
      runLock.unlock();
    }
  }

  /** How many finished jobs of this kind have expired and wait for the sweep. */
  public long expiredCount() {
    EngineContext ctx = requireContext();
    return ctx.store().countExpired(kind(), ctx.clock().now());
  }

  // ---- lifecycle -------------------------------------------------------------------------

  /**
   * Sets how far claims go ahead of the free threads in place of the configured window (null goes
   * back to it) and forgets the kind's run time, as at start; for tests, which flip it on one kind.
   */
  void claimAhead(Duration window) {
    claimAheadSetByTest = window;
    typicalRunNanos.set(0);
  }

  /** Called once by the {@link ServiceManager}: wires the engine in and starts the threads. */
  void attach(EngineContext engineContext, int initialThreads) {
    this.context = engineContext;
    this.outcomes = new Outcomes(kind(), engineContext);
    this.sweeper = new Sweeper(kind(), engineContext, this::cleanup);
    this.pool = new WorkerPool(kind(), initialThreads);
    if (engineContext.wakeUps()) {
      Thread thread = new Thread(this::wakeLoop, "jobs-" + kind() + "-waker");
      thread.setDaemon(true);
      this.waker = thread;
      thread.start();
    }
  }

  @Override
  void stop() {
    Thread thread = waker;
    if (thread != null) {
      thread.interrupt();
    }
    WorkerPool workers = pool;
    if (workers != null) {
      workers.shutdownNow();
    }
  }

  private void wakeLoop() {
    while (!Thread.currentThread().isInterrupted()) {
      try {
        wakeSignal.acquire();
        lingerForStragglers();
        wakeSignal.drainPermits();
        if (ownerLock().trust() != Trust.NONE) {
          wakeOnce();
        }
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException | Error e) {
        // An Error from a kind's code must not end this thread: wake-ups would stop for good.
        LOG.errorf(e, "%s: run after a wake-up failed; the next tick retries", kind());
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

  private EngineContext requireContext() {
    EngineContext ctx = context;
    if (ctx == null) {
      throw new IllegalStateException(kind() + " is not registered with the ServiceManager");
    }
    return ctx;
  }

  /** The error text stored for a failure: exception type and message, no stack trace. */
  static String describe(Throwable e) {
    String message = e.getMessage();
    return e.getClass().getSimpleName() + (message == null ? "" : ": " + message);
  }
}
