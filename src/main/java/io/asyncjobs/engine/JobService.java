package io.asyncjobs.engine;

import io.asyncjobs.config.ServiceSettings;
import io.asyncjobs.lock.OwnerLock;
import io.asyncjobs.lock.Trust;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobOutcomes;
import io.asyncjobs.queue.LocalStarts;
import io.asyncjobs.storage.VolumeSpace;
import io.opentelemetry.context.Scope;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.ToIntFunction;

/**
 * A service that processes the jobs of one kind. A kind's author writes {@link #kind()}, {@link
 * #title()}, {@link #process(Job)} and {@link #cleanup(Job)}; registration, retention, concurrency,
 * timeouts and crash recovery come from here.
 *
 * <p>The work is done by one {@link ShardRunner} per shard of the kind, each under its shard's
 * lock: with the unsharded default, one runner under the one owner lock. Each run of a runner is
 * four steps, in order: reap finished tasks, recover orphans, refill up to the concurrency limit,
 * sweep expired jobs (see {@link ShardRunner}). {@link #runOnce()} runs every runner once, so a
 * test drives a kind as a whole. Tasks outlive the run that started them; the run itself only does
 * database work and returns quickly. A task leaves this process's books only once what became of it
 * is committed, so an outcome is never lost to a failed write.
 */
public abstract class JobService extends BaseService {

  /** The task whose {@code process} runs on the current thread, for {@link #reportProgress}. */
  private static final ThreadLocal<Task> CURRENT = new ThreadLocal<>();

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

  /** A {@code jobs.claim-ahead-unwritten-max} a test set instead of the configured one, or null. */
  private volatile Integer unwrittenSetByTest;

  /** One runner per shard of the kind this replica may own, the sweeping one first. */
  private final List<ShardRunner> runners = new CopyOnWriteArrayList<>();

  private volatile EngineContext context;
  private volatile Sweeper sweeper;

  /** The kind's shards in the current mapping, set by {@link #attach}; retired ones are not. */
  private volatile List<String> mappedShards = List.of();

  private volatile Function<String, OwnerLock> locks;

  /** The job kind this service processes; also its name in configuration and metrics. */
  public abstract String kind();

  /** A human title for admin pages. */
  public abstract String title();

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

  /**
   * Whether a failure of {@code process} is transient, so that the job is worth trying again after
   * a backoff (while it has attempts left under {@code max-attempts}). By default: a {@link
   * TransientFailure}, one of {@link #transientFailures()}, or an I/O error other than those that
   * describe the input (a missing or unreadable file, a malformed document), anywhere in the cause
   * chain. A kind overrides this to decide for itself; what it throws here is taken as "no".
   */
  protected boolean retryable(Throwable failure) {
    return RetryPolicy.transientByDefault(failure, transientFailures());
  }

  /** Exception types of this kind that are transient; {@link #retryable} retries them. */
  protected java.util.Set<Class<? extends Throwable>> transientFailures() {
    return java.util.Set.of();
  }

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
      task.progress.set(new JobOutcomes.ProgressReport(task.job.uid, fraction, itemsDone));
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
   * Runs every runner once: the four steps, in order, as far as each shard lock's trust allows.
   * Never runs a runner concurrently with itself.
   *
   * @return what the runs did, added up
   */
  @Override
  public TickResult runOnce() {
    requireContext();
    Tally total = new Tally();
    for (ShardRunner runner : runners) {
      total.add(runner.runOnce());
    }
    return total.result();
  }

  /**
   * Runs each runner whose shard this replica may act for (it owns the lock, or its confirmation is
   * merely late), and lets the others hand back what they still hold.
   *
   * @return what the runs did, added up, or null when this replica owns none of the shards
   */
  @Override
  public RunResult supervise() {
    requireContext();
    Tally total = null;
    for (ShardRunner runner : runners) {
      if (runner.lock().trust() == Trust.NONE) {
        runner.whenNotOwner();
      } else {
        if (total == null) {
          total = new Tally();
        }
        total.add(runner.runOnce());
      }
    }
    return total == null ? null : total.result();
  }

  /** Every runner's wake-up path once (see {@link ShardRunner#wakeOnce()}); for tests. */
  TickResult wakeOnce() {
    requireContext();
    Tally total = new Tally();
    for (ShardRunner runner : runners) {
      total.add(runner.wakeOnce());
    }
    return total.result();
  }

  @Override
  protected void whenNotOwner() {
    runners.forEach(ShardRunner::whenNotOwner);
  }

  /**
   * Interrupts the running tasks of every shard whose lock can no longer be trusted. Needs no
   * database and no run lock, so it works while a run hangs on a database that went away.
   */
  void abandonUntrusted() {
    for (ShardRunner runner : runners) {
      if (runner.inFlightCount() > 0 && runner.lock().trust() == Trust.NONE) {
        runner.abandonWork();
      }
    }
  }

  /** Interrupts every running task of every shard, whatever the locks say. */
  void abandonWork() {
    runners.forEach(ShardRunner::abandonWork);
  }

  /** Stops every runner claiming (see {@link ShardRunner#beginDrain()}). */
  void beginDrain() {
    runners.forEach(ShardRunner::beginDrain);
  }

  /** Claims again after {@link #beginDrain()}; for tests that hand over without stopping. */
  void endDrain() {
    runners.forEach(ShardRunner::endDrain);
  }

  /**
   * The last step of a graceful shutdown, for every shard (see {@link ShardRunner#handBack()}).
   *
   * @return how many jobs went back to pending
   */
  int handBack() {
    int released = 0;
    for (ShardRunner runner : runners) {
      released += runner.handBack();
    }
    return released;
  }

  /** Stops one shard's runner claiming; see {@link ShardRunner#beginDrain()}. */
  void beginDrain(String shard) {
    runner(shard).ifPresent(ShardRunner::beginDrain);
  }

  /** Lets one shard's runner claim again after {@link #beginDrain(String)}. */
  void endDrain(String shard) {
    runner(shard).ifPresent(ShardRunner::endDrain);
  }

  /**
   * Waits until the tasks of one shard have returned from {@code process}.
   *
   * @return false when some were still running at the deadline
   */
  boolean awaitTasks(String shard, long deadlineNanos) throws InterruptedException {
    Optional<ShardRunner> runner = runner(shard);
    return runner.isEmpty() || runner.get().awaitReturned(deadlineNanos);
  }

  /**
   * The last step of handing one shard over (see {@link ShardRunner#handBack()}).
   *
   * @return how many jobs went back to pending
   */
  int handBack(String shard) {
    return runner(shard).map(runner -> runner.handBack(false)).orElse(0);
  }

  /** Whether one shard's runner has nothing in flight and no thread still running; true if none. */
  boolean settled(String shard) {
    return runner(shard).map(ShardRunner::settled).orElse(true);
  }

  /** Jobs this process is working on now (or whose outcome is not yet written), every shard. */
  public int inFlightCount() {
    return sumOverShards(ShardRunner::inFlightCount);
  }

  /** The tasks in flight now, every shard; for tests to say which one a count is about. */
  List<Task> tasksInFlight() {
    return runners.stream().flatMap(runner -> runner.tasks().stream()).toList();
  }

  /** Worker threads waiting at a start gate for outcomes to be written, every shard; for tests. */
  int waitingAtStartGate() {
    return sumOverShards(ShardRunner::waitingAtStartGate);
  }

  /** Tasks counted in a start gate (begun, fate not yet settled), every shard; for tests. */
  int begunAtStartGate() {
    return sumOverShards(ShardRunner::begunAtStartGate);
  }

  private int sumOverShards(ToIntFunction<ShardRunner> count) {
    return runners.stream().mapToInt(count).sum();
  }

  /**
   * Waits until every task started so far has returned from {@code process}.
   *
   * @return false when some were still running at the deadline
   */
  public boolean awaitTasks(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    for (ShardRunner runner : runners) {
      if (!runner.awaitReturned(deadline)) {
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
    for (ShardRunner runner : runners) {
      Task task = runner.task(uid);
      if (task != null) {
        return task.returnedLatch.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
      }
    }
    return true;
  }

  /** Asks every runner of the kind for a run as soon as possible. Coalesces. */
  public void requestWake() {
    runners.forEach(ShardRunner::requestWake);
  }

  /** Whether the runner of {@code shard} was asked to claim since its last claim; for tests. */
  boolean claimWanted(String shard) {
    return runner(shard).map(ShardRunner::claimWanted).orElse(false);
  }

  /** Whether this replica runs {@code shard} and its lock lets it claim now. */
  public boolean claimsHere(String shard) {
    return runner(shard).map(r -> r.lock().trust() == Trust.CLAIM).orElse(false);
  }

  /**
   * A free thread of the runner of {@code shard} held for a job about to be inserted, or null; see
   * {@link ShardRunner#reserveStart}.
   */
  LocalStarts.Reservation reserveStart(String shard) {
    return runner(shard).map(ShardRunner::reserveStart).orElse(null);
  }

  /** Asks the runner of one shard for a run; a shard this replica has no runner for is ignored. */
  public void requestWake(String shard) {
    runner(shard).ifPresent(ShardRunner::requestWake);
  }

  /**
   * Asks every runner for a run that claims from the head of the queue: an older job became pending
   * again (an admin retry, a handover), which a wake-up claiming after its cursor would pass over.
   */
  public void requestWakeFromHead() {
    runners.forEach(ShardRunner::requestWakeFromHead);
  }

  /**
   * Asks every runner for a run that reads the settings again first and claims from the head: the
   * kind was paused or resumed.
   */
  public void requestSettingsRead() {
    runners.forEach(ShardRunner::requestSettingsRead);
  }

  /** As {@link #requestWakeFromHead()}, for one shard. */
  public void requestWakeFromHead(String shard) {
    runner(shard).ifPresent(ShardRunner::requestWakeFromHead);
  }

  /** The keys of the shards this replica has a runner for, the sweeping one first. */
  public List<String> shards() {
    return runners.stream().map(ShardRunner::shard).toList();
  }

  /** The kind's shards in the current mapping: {@link #shards()} without the retired ones. */
  List<String> mappedShards() {
    return mappedShards;
  }

  /** The lock of one shard's runner. */
  Optional<OwnerLock> lockOf(String shard) {
    return runner(shard).map(ShardRunner::lock);
  }

  private Optional<ShardRunner> runner(String shard) {
    for (ShardRunner runner : runners) {
      if (runner.shard().equals(shard)) {
        return Optional.of(runner);
      }
    }
    return Optional.empty();
  }

  /**
   * Runs {@code process} for a task on the current (worker) thread and records its outcome on the
   * task itself before anything is told the task returned: the run that this wakes must find the
   * outcome complete.
   *
   * @return false when the task was stopped or abandoned while it waited for a thread
   */
  boolean execute(Task task) {
    if (!task.begin(requireContext().clock().now())) {
      return false;
    }
    Map<String, Object> result = null;
    Throwable failure = null;
    boolean transientFailure = false;
    CURRENT.set(task);
    JobTraces traces = requireContext().traces();
    try (Scope traced = traces.enter(task.span)) {
      result = process(task.job);
    } catch (Throwable e) { // an Error (say a stack overflow) fails the job like an exception
      failure = e;
      transientFailure = isRetryable(e);
      traces.threw(task.span, e);
    } finally {
      CURRENT.remove();
      long ran = task.ranNanos(System.nanoTime());
      typicalRunNanos.getAndUpdate(avg -> avg == 0 ? Math.max(1, ran) : avg + (ran - avg) / 8);
      task.finish(result, failure, transientFailure, requireContext().clock().now());
    }
    return true;
  }

  /**
   * How many jobs may wait claimed for a thread in one runner: as many as its threads finish within
   * the claim-ahead window at the kind's recent run time, at most the configured bound. None before
   * a run time is known, so a kind of long jobs never holds jobs it cannot start.
   */
  int aheadRoom(ServiceSettings settings) {
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

  /**
   * With claims ahead, how many jobs beyond {@code max-concurrent} may have begun while their
   * outcomes are not yet committed ({@link StartGate}).
   */
  int unwrittenRoom() {
    Integer set = unwrittenSetByTest;
    return set != null ? set : requireContext().claimAheadUnwrittenMax();
  }

  Sweeper sweeper() {
    return sweeper;
  }

  // ---- step 4: sweep ---------------------------------------------------------------------

  /**
   * Sweeps now rather than on the next tick: every expired finished job of this kind, batch after
   * batch, goes through {@link #cleanup} and is deleted, until none is left. The admin CLI's prune
   * calls it from a process that never owns a lock. That is safe because the sweep touches only
   * finished rows, which no owner writes any more; an owner's own sweep may take the same rows at
   * the same moment, and then a job's cleanup runs twice, which every cleanup must bear anyway (one
   * that threw is called again later).
   *
   * @return the jobs deleted ({@link TickResult#swept()}) and those kept because their cleanup
   *     threw ({@link TickResult#cleanupErrors()}); every other count is zero
   */
  public TickResult sweepExpired() {
    requireContext();
    Tally tally = new Tally();
    runners.get(0).sweepAll(tally);
    return tally.result();
  }

  /** How many finished jobs of this kind have expired and wait for the sweep. */
  public long expiredCount() {
    EngineContext ctx = requireContext();
    return ctx.jobSweep().countExpired(kind(), ctx.clock().now());
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

  /** Sets {@code jobs.claim-ahead-unwritten-max} for this kind in place of the configured one. */
  void claimAheadUnwritten(Integer max) {
    unwrittenSetByTest = max;
  }

  /**
   * Called once by the {@link ServiceManager}: wires the engine in and starts a runner for each of
   * the kind's shards, each under the lock {@code locks} gives for the shard's key.
   *
   * @param shardKeys the kind's shards in the current mapping; the first one sweeps
   */
  void attach(
      EngineContext engineContext,
      int initialThreads,
      List<String> shardKeys,
      Function<String, OwnerLock> locks) {
    if (shardKeys.isEmpty()) {
      throw new IllegalArgumentException(kind() + " needs at least one shard");
    }
    this.context = engineContext;
    this.mappedShards = List.copyOf(shardKeys);
    this.sweeper = new Sweeper(kind(), engineContext, this::cleanup);
    this.locks = locks;
    List<ShardRunner> created = new ArrayList<>();
    for (String key : shardKeys) {
      created.add(
          new ShardRunner(
              this, key, engineContext, locks.apply(key), created.isEmpty(), initialThreads));
    }
    runners.addAll(created);
    created.forEach(ShardRunner::start);
  }

  /**
   * The lock of every runner becomes {@code lock}: the application's lock with a test's hand on it
   * (a late confirmation, a lost lock).
   */
  @Override
  void attachLock(OwnerLock lock) {
    super.attachLock(lock);
    for (ShardRunner runner : runners) {
      runner.attachLock(lock);
    }
  }

  /**
   * Adds a runner for a shard the current mapping does not name but that still has jobs (a retired
   * shard, after a change of the mapping): it works them under the shard's own lock, and sweeps
   * nothing (the kind's first shard sweeps every finished job of the kind).
   *
   * @return false when the kind already has a runner for the shard
   */
  boolean addShard(String key) {
    EngineContext ctx = requireContext();
    synchronized (runners) {
      if (runner(key).isPresent()) {
        return false;
      }
      ShardRunner runner =
          new ShardRunner(this, key, ctx, locks.apply(key), false, runners.get(0).threads());
      runners.add(runner);
      runner.start();
    }
    return true;
  }

  /**
   * Removes the runner of a retired shard once it has nothing in flight; call it only while the
   * runner drains ({@link #beginDrain(String)}) and after checking that the shard has no jobs, so
   * that no claim can come in between.
   *
   * @return whether it was removed
   */
  boolean removeShard(String key) {
    synchronized (runners) {
      Optional<ShardRunner> found = runner(key);
      if (found.isEmpty() || found.get() == runners.get(0) || !found.get().settled()) {
        return false;
      }
      runners.remove(found.get());
      found.get().stop();
      return true;
    }
  }

  /** The lock of one shard's runner becomes {@code lock}; for tests that steer one shard. */
  void attachLock(String shard, OwnerLock lock) {
    runner(shard)
        .orElseThrow(() -> new IllegalArgumentException(kind() + " has no shard " + shard))
        .attachLock(lock);
  }

  @Override
  void stop() {
    runners.forEach(ShardRunner::stop);
  }

  private EngineContext requireContext() {
    EngineContext ctx = context;
    if (ctx == null) {
      throw new IllegalStateException(kind() + " is not registered with the ServiceManager");
    }
    return ctx;
  }

  /** {@link #retryable}, where a hook that throws answers no. */
  private boolean isRetryable(Throwable failure) {
    if (failure instanceof Error) {
      return false;
    }
    try {
      return retryable(failure);
    } catch (RuntimeException e) {
      return false;
    }
  }

  /**
   * The error text stored for a failure: exception type and message, no stack trace; for a volume
   * that ran out of space, only the words of {@link VolumeSpace}, which a caller can act on.
   */
  static String describe(Throwable e) {
    String noSpace = VolumeSpace.describe(e);
    if (noSpace != null) {
      return noSpace;
    }
    String message = e.getMessage();
    return e.getClass().getSimpleName() + (message == null ? "" : ": " + message);
  }
}
