package io.asyncjobs.engine;

import io.asyncjobs.config.ServiceSettings;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.jboss.logging.Logger;

/**
 * A service that processes the jobs of one kind. A kind's author writes {@link #kind()}, {@link
 * #title()}, {@link #process(Job)} and {@link #cleanup(Job)}; registration, retention, concurrency,
 * timeouts and crash recovery come from here.
 *
 * <p>Each {@link #runOnce()} is four steps, in order: reap finished tasks, recover orphans, refill
 * up to the concurrency limit, sweep expired jobs. Tasks outlive the run that started them; the run
 * itself only does database work and returns quickly.
 */
public abstract class JobService extends BaseService {

  private static final Logger LOG = Logger.getLogger(JobService.class);

  /** The task whose {@code process} runs on the current thread, for {@link #reportProgress}. */
  private static final ThreadLocal<Task> CURRENT = new ThreadLocal<>();

  /** Shortest interval between two progress writes of one job. */
  private static final Duration PROGRESS_INTERVAL = Duration.ofSeconds(1);

  /** Only one run at a time: from the tick, a wake-up or a test. */
  private final ReentrantLock runLock = new ReentrantLock();

  /** Tasks started by this process and not yet reaped. */
  private final Map<UUID, Task> inFlight = new ConcurrentHashMap<>();

  /**
   * Tasks interrupted (timed out, cancelled, ownership lost) whose threads have not yet returned;
   * they hold a slot.
   */
  private final List<Task> timedOut = new CopyOnWriteArrayList<>();

  private final Semaphore wakeSignal = new Semaphore(0);

  /** Longest a wake-up waits for running tasks to finish alongside those already finished. */
  private static final long LINGER_NANOS = TimeUnit.MICROSECONDS.toNanos(300);

  /** Smaller than every job id: the wake-up claim cursor before anything was claimed. */
  private static final UUID NO_CURSOR = new UUID(0, 0);

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

  /** The job kind this service processes; also its name in configuration and metrics. */
  public abstract String kind();

  /**
   * The result key naming the job's downloadable artifact: a path relative to the data directory.
   * The download route serves that file; the status view never shows the path itself.
   */
  public static final String RESULT_FILE = "file";

  /** A human title for admin pages. */
  public abstract String title();

  /**
   * Does the work of one job. May block; runs on the service's own threads, at most {@code
   * max-concurrent} at once, and is interrupted when the job times out.
   *
   * @return the result, stored as JSON; the numbers under {@code bytes_in}, {@code bytes_out} and
   *     {@code item_count} also fill the job's stat columns, and {@link #RESULT_FILE} names the
   *     file callers download
   * @throws Exception to fail the job; its type and message become the job's error
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

  /** The four steps, in order. Never runs concurrently with itself. */
  @Override
  public TickResult runOnce() {
    EngineContext ctx = requireContext();
    runLock.lock();
    long startNanos = System.nanoTime();
    try {
      Instant now = ctx.clock().now();
      ServiceSettings settings = ctx.settings().effective(kind());
      lastSettings = settings;
      long epoch = ownerLock().epoch();
      Reaped reaped = reap(settings, epoch, now);
      recordProgress(epoch, now);
      JobStore.RescueCounts rescued = recoverOrphans(settings, epoch, now);
      int claimed = refill(settings, epoch, now);
      Swept swept = sweep(ctx, now);
      TickResult result =
          new TickResult(
              reaped.done,
              reaped.failed,
              reaped.timedOut,
              reaped.fenced,
              rescued.requeued(),
              rescued.failed(),
              claimed,
              swept.deleted,
              swept.errors);
      logIfNotEmpty(result);
      ctx.metrics().ran(kind(), result);
      return result;
    } finally {
      ctx.metrics().tickTook(kind(), Duration.ofNanos(System.nanoTime() - startNanos));
      runLock.unlock();
    }
  }

  /**
   * The wake-up path, run when a job of this kind was enqueued or one of its tasks finished: reap
   * and refill only, in one statement, with the settings of the last tick. Orphans and expired jobs
   * do not appear between ticks in a way that needs an immediate answer, so the tick alone handles
   * them.
   */
  TickResult wakeOnce() {
    EngineContext ctx = requireContext();
    runLock.lock();
    try {
      ServiceSettings settings = lastTickSettings(ctx);
      Instant now = ctx.clock().now();
      long epoch = ownerLock().epoch();
      Reaped reaped = collectFinished(settings, now, Set.of());
      List<Completion> current = reaped.byEpoch.remove(epoch);
      for (Map.Entry<Long, List<Completion>> older : reaped.byEpoch.entrySet()) {
        Set<UUID> written =
            ctx.store().completeMany(older.getValue(), older.getKey(), settings.retention());
        reaped.tally(older.getValue(), written, older.getKey());
      }
      int capacity = draining ? 0 : freeSlots(settings);
      UUID after = cursor(epoch);
      List<Job> claimed;
      if (current == null) {
        claimed =
            capacity > 0 ? ctx.store().claimMany(kind(), capacity, epoch, now, after) : List.of();
      } else {
        JobStore.CompleteAndClaim both =
            ctx.store()
                .completeAndClaimMany(
                    kind(),
                    current,
                    epoch,
                    settings.retention(),
                    Math.max(0, capacity),
                    now,
                    after);
        reaped.tally(current, both.written(), epoch);
        claimed = both.claimed();
      }
      start(claimed, epoch, now);
      TickResult result =
          new TickResult(
              reaped.done,
              reaped.failed,
              reaped.timedOut,
              reaped.fenced,
              0,
              0,
              claimed.size(),
              0,
              0);
      ctx.metrics().ran(kind(), result);
      return result;
    } finally {
      runLock.unlock();
    }
  }

  /** Routine counts at debug level; anything unusual (recoveries, fencing, cleanup) at info. */
  private void logIfNotEmpty(TickResult result) {
    if (result.isEmpty()) {
      return;
    }
    if (result.requeued() + result.abandoned() + result.fenced() + result.cleanupErrors() > 0) {
      LOG.infof("%s: %s", kind(), result);
    } else {
      LOG.debugf("%s: %s", kind(), result);
    }
  }

  /**
   * This replica lost the lock: its running tasks are interrupted and forgotten. Their rows carry
   * this owner's epoch, so whatever they might still write is fenced off, and the new owner
   * recovers them as orphans.
   */
  @Override
  protected void whenNotOwner() {
    if (inFlight.isEmpty() || !runLock.tryLock()) {
      return;
    }
    try {
      int abandoned = inFlight.size();
      for (Task task : inFlight.values()) {
        task.future.cancel(true);
        timedOut.add(task);
      }
      inFlight.clear();
      LOG.warnf(
          "%s: lost the owner lock; interrupted %d running job(s) for the next owner to recover",
          kind(), abandoned);
    } finally {
      runLock.unlock();
    }
  }

  /** Stops claiming new jobs (shutdown has begun); running ones go on. */
  void beginDrain() {
    draining = true;
  }

  /** Claims again after {@link #beginDrain()}; for tests that hand over without stopping. */
  void endDrain() {
    draining = false;
  }

  /**
   * The last step of a graceful shutdown: writes the outcomes of tasks that finished, and puts the
   * ones still running back to pending without counting a retry, interrupting them.
   *
   * @return how many jobs went back to pending
   */
  int handBack() {
    EngineContext ctx = requireContext();
    runLock.lock();
    try {
      ServiceSettings settings = lastTickSettings(ctx);
      Instant now = ctx.clock().now();
      Reaped reaped = new Reaped();
      List<UUID> unfinished = new ArrayList<>();
      for (Iterator<Task> it = inFlight.values().iterator(); it.hasNext(); ) {
        Task task = it.next();
        if (task.returned) {
          reaped.byEpoch.computeIfAbsent(task.epoch, e -> new ArrayList<>()).add(task.outcome());
        } else {
          task.future.cancel(true);
          unfinished.add(task.job.uid);
        }
        it.remove();
      }
      for (Map.Entry<Long, List<Completion>> group : reaped.byEpoch.entrySet()) {
        Set<UUID> written =
            ctx.store().completeMany(group.getValue(), group.getKey(), settings.retention());
        reaped.tally(group.getValue(), written, group.getKey());
      }
      int released = ctx.store().releaseMany(unfinished, ownerLock().epoch(), now);
      if (released > 0 || reaped.done + reaped.failed > 0) {
        LOG.infof(
            "%s: handed over: %d finished job(s) written, %d put back to pending",
            kind(), reaped.done + reaped.failed, released);
      }
      return released;
    } finally {
      runLock.unlock();
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

  /** Jobs this process is working on now. */
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
      task = timedOut.stream().filter(t -> t.job.uid.equals(uid)).findFirst().orElse(null);
    }
    if (task == null) {
      return true;
    }
    return task.returnedLatch.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
  }

  /** Asks for a run as soon as possible, on this service's own thread. Coalesces. */
  public void requestWake() {
    wakeSignal.release();
  }

  // ---- step 1: reap ----------------------------------------------------------------------

  private Reaped reap(ServiceSettings settings, long epoch, Instant now) {
    Set<UUID> cancelRequested =
        inFlight.isEmpty() ? Set.of() : requireContext().store().cancelRequestedMany(kind(), epoch);
    Reaped reaped = collectFinished(settings, now, cancelRequested);
    for (Map.Entry<Long, List<Completion>> group : reaped.byEpoch.entrySet()) {
      Set<UUID> written =
          requireContext()
              .store()
              .completeMany(group.getValue(), group.getKey(), settings.retention());
      reaped.tally(group.getValue(), written, group.getKey());
    }
    return reaped;
  }

  /**
   * Takes finished tasks, and tasks past their timeout (interrupting them), out of the in-flight
   * map, grouped by the epoch their rows were claimed under.
   */
  private Reaped collectFinished(ServiceSettings settings, Instant now, Set<UUID> cancelRequested) {
    Reaped reaped = new Reaped();
    for (Iterator<Task> it = inFlight.values().iterator(); it.hasNext(); ) {
      Task task = it.next();
      Completion completion;
      if (task.returned) {
        completion = task.outcome();
      } else if (cancelRequested.contains(task.job.uid)) {
        task.future.cancel(true);
        timedOut.add(task);
        completion = task.stopped("cancelled on request", now);
      } else if (Duration.between(task.startedAt, now).compareTo(settings.jobTimeout()) > 0) {
        task.future.cancel(true);
        timedOut.add(task);
        reaped.timedOut++;
        completion =
            task.stopped("timed out after " + settings.jobTimeout().toSeconds() + " s", now);
      } else {
        continue;
      }
      it.remove();
      reaped.byEpoch.computeIfAbsent(task.epoch, e -> new ArrayList<>()).add(completion);
    }
    return reaped;
  }

  /**
   * Writes the progress running tasks reported since the last write, for each job at most once per
   * {@link #PROGRESS_INTERVAL}.
   */
  private void recordProgress(long epoch, Instant now) {
    List<JobStore.ProgressReport> reports = new ArrayList<>();
    for (Task task : inFlight.values()) {
      if (task.epoch != epoch
          || (task.progressWrittenAt != null
              && Duration.between(task.progressWrittenAt, now).compareTo(PROGRESS_INTERVAL) < 0)) {
        continue;
      }
      JobStore.ProgressReport report = task.progress.getAndSet(null);
      if (report != null) {
        reports.add(report);
        task.progressWrittenAt = now;
      }
    }
    requireContext().store().progressMany(reports, epoch, now);
  }

  // ---- step 2: recover orphans -----------------------------------------------------------

  private JobStore.RescueCounts recoverOrphans(ServiceSettings settings, long epoch, Instant now) {
    JobStore.RescueCounts counts =
        requireContext()
            .store()
            .rescueMany(
                kind(), inFlight.keySet(), epoch, settings.maxRetries(), settings.retention(), now);
    if (counts.requeued() + counts.failed() > 0) {
      LOG.infof(
          "%s: recovered orphaned jobs: %d back to pending, %d failed after max-retries %d",
          kind(), counts.requeued(), counts.failed(), settings.maxRetries());
    }
    return counts;
  }

  // ---- step 3: refill --------------------------------------------------------------------

  private int refill(ServiceSettings settings, long epoch, Instant now) {
    pool.resize(settings.maxConcurrent());
    int capacity = draining ? 0 : freeSlots(settings);
    if (capacity <= 0) {
      return 0;
    }
    List<Job> claimed = requireContext().store().claimMany(kind(), capacity, epoch, now, null);
    start(claimed, epoch, now);
    return claimed.size();
  }

  /** Slots not held by an in-flight task or by a timed-out one whose thread has not returned. */
  private int freeSlots(ServiceSettings settings) {
    timedOut.removeIf(task -> task.returned);
    return settings.maxConcurrent() - inFlight.size() - timedOut.size();
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
    Map<String, Object> result = null;
    Throwable failure = null;
    CURRENT.set(task);
    try {
      result = process(task.job);
    } catch (Throwable e) { // an Error (say a stack overflow) fails the job like an exception
      failure = e;
    } finally {
      CURRENT.remove();
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
      Instant now = ctx.clock().now();
      int deleted = 0;
      int errors = 0;
      Swept batch;
      do {
        // Each batch deletes its rows or moves their expiry past now, so the next finds others.
        batch = sweep(ctx, now);
        deleted += batch.deleted;
        errors += batch.errors;
        // Ends: a failed cleanup is deferred by jobs.cleanup-retry-delay (at least a second).
      } while (batch.found == ctx.sweepBatchSize());
      return new TickResult(0, 0, 0, 0, 0, 0, 0, deleted, errors);
    } finally {
      runLock.unlock();
    }
  }

  /** How many finished jobs of this kind have expired and wait for the sweep. */
  public long expiredCount() {
    EngineContext ctx = requireContext();
    return ctx.store().countExpired(kind(), ctx.clock().now());
  }

  private Swept sweep(EngineContext ctx, Instant now) {
    List<Job> expired = ctx.store().expiredMany(kind(), now, ctx.sweepBatchSize());
    Swept swept = new Swept();
    swept.found = expired.size();
    if (expired.isEmpty()) {
      return swept;
    }
    List<UUID> cleaned = new ArrayList<>();
    List<UUID> kept = new ArrayList<>();
    for (Job job : expired) {
      try {
        cleanup(job);
        cleaned.add(job.uid);
      } catch (Exception e) {
        kept.add(job.uid);
        LOG.warnf(
            "%s: cleanup of expired job %s failed, keeping it for %s: %s",
            kind(), job.uid, ctx.cleanupRetryDelay(), describe(e));
      }
    }
    swept.deleted = ctx.store().deleteMany(cleaned);
    swept.errors = kept.size();
    ctx.store().deferExpiryMany(kept, now.plus(ctx.cleanupRetryDelay()));
    return swept;
  }

  // ---- lifecycle -------------------------------------------------------------------------

  /** Called once by the {@link ServiceManager}: wires the engine in and starts the threads. */
  void attach(EngineContext engineContext, int initialThreads) {
    this.context = engineContext;
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
        if (ownerLock().isOwner()) {
          wakeOnce();
        }
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
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
        if (task.returned) {
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

  /** One job being processed by this process. */
  private static final class Task {
    final Job job;
    final Instant startedAt;
    final long epoch;
    volatile Future<?> future;

    /** The latest progress reported and not yet written. */
    final AtomicReference<JobStore.ProgressReport> progress = new AtomicReference<>();

    /** When progress was last written; touched only under the run lock. */
    Instant progressWrittenAt;

    private Map<String, Object> result;
    private Throwable failure;
    private Instant finishedAt;

    /** Set last, after the outcome fields: reading it true makes them visible. */
    volatile boolean returned;

    final CountDownLatch returnedLatch = new CountDownLatch(1);

    Task(Job job, Instant startedAt, long epoch) {
      this.job = job;
      this.startedAt = startedAt;
      this.epoch = epoch;
    }

    void finish(Map<String, Object> processResult, Throwable processFailure, Instant end) {
      result = processResult;
      failure = processFailure;
      finishedAt = end;
      returned = true;
      returnedLatch.countDown();
    }

    /** What {@code process} did; only once {@link #returned}. */
    Completion outcome() {
      Completion completion =
          failure != null
              ? Completion.failed(job.uid, describe(failure), startedAt, finishedAt)
              : Completion.done(job.uid, result, startedAt, finishedAt);
      return completion.withProgress(progress.getAndSet(null));
    }

    /** The failure of a task the owner stopped (cancel, timeout), with its last progress. */
    Completion stopped(String error, Instant now) {
      return Completion.failed(job.uid, error, startedAt, now)
          .withProgress(progress.getAndSet(null));
    }
  }

  /** Outcomes taken from the in-flight map, and what became of them. */
  private final class Reaped {
    final Map<Long, List<Completion>> byEpoch = new HashMap<>();
    int done;
    int failed;
    int timedOut;
    int fenced;

    /** Counts what was written; a missing uid was fenced off by a newer owner. */
    void tally(List<Completion> completions, Set<UUID> written, long epoch) {
      for (Completion c : completions) {
        if (!written.contains(c.uid())) {
          fenced++;
          LOG.warnf(
              "%s: outcome of job %s not written: the job is no longer running under epoch %d"
                  + " (a newer owner holds it)",
              kind(), c.uid(), epoch);
        } else {
          if (c.status() == JobStatus.DONE) {
            done++;
          } else {
            failed++;
          }
          requireContext().metrics().completed(kind(), c);
        }
      }
    }
  }

  private static final class Swept {
    int found;
    int deleted;
    int errors;
  }
}
