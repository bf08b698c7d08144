package io.asyncjobs.engine;

import io.asyncjobs.config.ClaimOrder;
import io.asyncjobs.config.ServiceSettings;
import io.asyncjobs.lock.OwnerLock;
import io.asyncjobs.queue.Completion;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobClaims;
import io.asyncjobs.queue.JobPriority;
import io.asyncjobs.queue.JobStatus;
import io.asyncjobs.queue.StoreException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jboss.logging.Logger;

/**
 * The third step of a run, refill: makes the shard's delayed jobs due whose time has come (and arms
 * a timer for the next one), then claims up to the room the threads and the claim-ahead window
 * leave, in the kind's claim order (priority, turns between owners, a running quota per owner), and
 * starts a task for each job claimed. The tick claims from the head of the queue; a wake-up claims
 * after the last job it claimed under the same epoch (the claim cursor), and its claim may carry
 * the outcomes of finished tasks in the same statement.
 */
final class Refiller {

  private static final Logger LOG = Logger.getLogger(Refiller.class);

  /** One timer thread for every runner's next due delayed job; it only asks for a wake-up. */
  private static final ScheduledExecutorService DUE_TIMER =
      Executors.newSingleThreadScheduledExecutor(daemons("jobs-due-timer"));

  /**
   * From how many riders a wake-up writes their outcomes beside its claim ({@link
   * #writeBesideClaim}) rather than in the claim's statement. Below it the second connection and
   * the hand-off cost more than running the two updates side by side saves, and one statement keeps
   * the pickup of a lone job at one round trip.
   */
  static final int SIDE_WRITE_MIN = 64;

  /**
   * Writes wake-ups' outcomes beside their claims; a runner has at most one such write at a time
   * (under its run lock), so the threads are at most the runners waking at once.
   */
  private static final ExecutorService SIDE_WRITER =
      Executors.newCachedThreadPool(daemons("jobs-outcome-writer"));

  /** Daemon threads named {@code name}: neither executor keeps the process alive. */
  private static ThreadFactory daemons(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
  }

  private final JobService service;
  private final EngineContext context;
  private final ShardState state;
  private final Outcomes outcomes;
  private final WorkerPool pool;

  /** Set by the due timer: the next wake-up releases due jobs first and claims from the head. */
  private final AtomicBoolean dueWanted = new AtomicBoolean();

  /** When the armed timer fires, or null when none is armed. */
  private volatile Instant timerAt;

  /**
   * The last job (by priority, then uid) claimed under {@link #cursorEpoch}. Wake-ups claim after
   * it; the tick claims from the head of the queue and so also takes older jobs that became pending
   * again. Touched only under the run lock, like the other cursors.
   */
  private JobClaims.ClaimCursor claimCursor = JobClaims.HEAD;

  /** The owner the last claim in turns ({@code fair}) ended with; the next one starts after it. */
  private String turnCursor = "";

  private long cursorEpoch;

  Refiller(
      JobService service,
      EngineContext context,
      ShardState state,
      Outcomes outcomes,
      WorkerPool pool) {
    this.service = service;
    this.context = context;
    this.state = state;
    this.outcomes = outcomes;
    this.pool = pool;
  }

  /**
   * The tick's refill: releases the due delayed jobs, then claims from the head of the queue as
   * much as there is room for and starts their tasks. A claim fenced off by a newer owner
   * supersedes the lock and starts nothing.
   *
   * @return how many jobs were claimed and started
   */
  int runOnce(ServiceSettings settings, long epoch, Instant now, Tally tally) {
    releaseDue(epoch, now);
    pool.resize(settings.maxConcurrent());
    // A paused kind claims nothing; what runs finishes, and the steps before and after go on.
    int capacity = state.draining || settings.paused() ? 0 : claimRoom(settings);
    if (capacity <= 0) {
      return 0;
    }
    int cap = settings.maxRunningPerOwner();
    JobClaims.ClaimRequest head =
        new JobClaims.ClaimRequest(state.kind, state.shard, capacity, epoch, now, null);
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
      state.lock().superseded(epoch);
      return 0;
    }
    start(claimed.jobs(), epoch, now, claimStart, claimEnd);
    tally.claimed += claimed.jobs().size();
    return claimed.jobs().size();
  }

  /**
   * The wake-up's release of due delayed jobs, when the due timer fired or the reap just scheduled
   * a retry (whose time the timer must then be armed for). The jobs made due may sort before the
   * claim cursor, so the claim that follows starts from the head. A failure is left to the tick.
   */
  void releaseDueOnWake(long epoch, Instant now, Tally tally) {
    if (tally.rescheduled > 0) {
      dueWanted.set(true); // arms the timer for the retry the write just scheduled
    }
    if (dueWanted.getAndSet(false)) {
      try {
        releaseDue(epoch, now);
        state.rewind.set(true); // the jobs made due may sort before the cursor
      } catch (StoreException e) {
        LOG.debugf(
            "%s: releasing due jobs failed, the next tick does: %s", state.label(), e.getMessage());
      }
    }
  }

  /**
   * The wake-up's claim, after the claim cursor (from the head when a rewind was asked for), with
   * room for the threads {@code riders} free. Without turns or a running quota, and when riders
   * there are, their outcomes and the claim go in one statement. A store failure leaves the riders
   * in flight, for the next run to write.
   *
   * @param owner the lock the run read its epoch from; a fenced claim supersedes it
   * @return whether the claim was fenced off by a newer owner
   */
  boolean claimOnWake(
      Reaper.Riders riders,
      ServiceSettings settings,
      OwnerLock owner,
      long epoch,
      Instant now,
      Tally tally) {
    List<Task> combined = riders.tasks();
    List<Completion> completions = riders.completions();
    boolean fair = settings.claimOrder() == ClaimOrder.FAIR;
    int cap = settings.maxRunningPerOwner();
    int capacity = state.draining || settings.paused() ? 0 : claimRoom(settings) + combined.size();
    // A wake-up with no room keeps the request for the head for the next one that has room.
    JobClaims.ClaimCursor after =
        capacity > 0 && state.rewind.getAndSet(false) ? JobClaims.HEAD : cursor(epoch);
    if (after.priority() < JobPriority.DEFAULT) {
      // Jobs of the default priority enqueued meanwhile sort before this cursor and wake nobody.
      after = JobClaims.HEAD;
    }
    boolean fenced = false;
    JobTraces traces = context.traces();
    try {
      List<Job> claimed;
      long claimStart = traces.now();
      JobClaims.ClaimRequest claim =
          new JobClaims.ClaimRequest(
              state.kind, state.shard, Math.max(0, capacity), epoch, now, after);
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
                        state.kind, state.shard, Math.max(0, capacity), epoch, now, null),
                    cap);
        claimed = c.jobs();
        fenced = c.fenced();
      } else if (combined.isEmpty()) {
        JobClaims.Claimed c = context.jobClaims().claimMany(claim);
        claimed = c.jobs();
        fenced = c.fenced();
      } else if (completions.size() < SIDE_WRITE_MIN) {
        JobClaims.CompleteAndClaim both =
            context.jobClaims().completeAndClaimMany(completions, settings.retention(), claim);
        settle(riders, both.written(), epoch, claimStart, tally);
        claimed = both.claimed();
        fenced = both.fenced();
      } else {
        JobClaims.Claimed c = writeBesideClaim(riders, settings, epoch, claim, claimStart, tally);
        claimed = c.jobs();
        fenced = c.fenced();
      }
      long claimEnd = traces.now();
      if (fenced) {
        owner.superseded(epoch);
      }
      start(claimed, epoch, now, claimStart, claimEnd);
      tally.claimed += claimed.size();
    } catch (StoreException e) {
      // The outcomes stay in flight; the next run writes them.
      LOG.debugf("%s: a wake-up's write failed: %s", state.label(), e.getMessage());
    }
    return fenced;
  }

  /**
   * Writes the riders' outcomes on a connection of their own while the claim runs on another, and
   * waits for both: the two statements update disjoint rows, and on a server with more than one
   * core they run side by side instead of one after the other. Each is as when it runs alone: the
   * outcomes under their epoch (as the tick's reap writes them), the claim under the fence. What
   * one of them did stands when the other fails: outcomes written are counted and their tasks
   * forgotten, jobs claimed are started (their rows are running under this epoch; while as many
   * finished tasks are unwritten, they wait at the start gate). A failed write leaves its tasks in
   * flight for the next run, as a failed combined statement does; whatever the claim throws is
   * thrown once the write is accounted for. The wake-up holds two of the pool's connections
   * meanwhile.
   */
  private JobClaims.Claimed writeBesideClaim(
      Reaper.Riders riders,
      ServiceSettings settings,
      long epoch,
      JobClaims.ClaimRequest claim,
      long claimStart,
      Tally tally) {
    List<Completion> completions = riders.completions();
    Future<Map<UUID, JobStatus>> write =
        SIDE_WRITER.submit(
            () -> context.jobOutcomes().completeMany(completions, epoch, settings.retention()));
    JobClaims.Claimed claimed = null;
    // Whatever the claim throws, the write is waited for and accounted for first: left running, it
    // would commit outcomes whose tasks stay in flight, and the next run would count them fenced.
    Throwable claimFailure = null;
    try {
      claimed = context.jobClaims().claimMany(claim);
    } catch (RuntimeException | Error e) {
      claimFailure = e;
    }
    try {
      Map<UUID, JobStatus> written = awaitUninterruptibly(write);
      settle(riders, written, epoch, claimStart, tally);
      LOG.debugf(
          "%s: wrote %d outcomes beside a claim of %d",
          state.label(), written.size(), claimed == null ? 0 : claimed.jobs().size());
    } catch (StoreException e) {
      // The outcomes stay in flight; the next run writes them. The claim's jobs start regardless.
      LOG.debugf("%s: a wake-up's outcome write failed: %s", state.label(), e.getMessage());
    } catch (RuntimeException e) {
      LOG.warnf(e, "%s: a wake-up's outcome write failed; the next run writes them", state.label());
    }
    if (claimFailure instanceof RuntimeException failure) {
      throw failure;
    }
    if (claimFailure instanceof Error error) {
      throw error;
    }
    return claimed;
  }

  /**
   * The riders' outcomes are committed ({@code written}: the rows written and their statuses):
   * their spans get the outcome step, the tally counts them (the rest as fenced) and they leave the
   * books.
   */
  private void settle(
      Reaper.Riders riders,
      Map<UUID, JobStatus> written,
      long epoch,
      long claimStart,
      Tally tally) {
    long writtenAt = context.traces().now();
    for (Task task : riders.tasks()) {
      context.traces().step(task.span, JobTraces.OUTCOME, claimStart, writtenAt);
    }
    outcomes.tally(riders.completions(), written, epoch, tally);
    state.forget(riders.tasks());
  }

  /**
   * The side write's answer, waited for whatever interrupts come (the tasks' books depend on it);
   * an interrupt is kept for the caller.
   */
  private static <T> T awaitUninterruptibly(Future<T> future) {
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return future.get();
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (ExecutionException e) {
          if (e.getCause() instanceof RuntimeException failure) {
            throw failure;
          }
          throw new IllegalStateException(e.getCause());
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Makes the shard's delayed jobs due whose time has come, so the refill that follows can claim
   * them, and arms a timer for the earliest one still ahead when it falls before the next tick: a
   * delayed job starts at its time, not at the tick after it, with no polling in between.
   */
  private void releaseDue(long epoch, Instant now) {
    JobClaims.Released released =
        context.jobClaims().releaseDue(state.kind, state.shard, epoch, now);
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
          state.requestWake();
        },
        delayMillis,
        TimeUnit.MILLISECONDS);
  }

  /**
   * How many jobs a claim may take now: the threads not held by a task in flight or by a settled
   * one whose thread has not returned, and the room ahead of them the claim-ahead window allows.
   * Sets the start gate's limit to go with that room: the threads alone without claims ahead, and
   * {@code jobs.claim-ahead-unwritten-max} more with them.
   */
  private int claimRoom(ServiceSettings settings) {
    state.stragglers.removeIf(Task::returned);
    int ahead = service.aheadRoom(settings);
    state.gate.limit(settings.maxConcurrent() + (ahead > 0 ? service.unwrittenRoom() : 0));
    return settings.maxConcurrent() + ahead - state.inFlight.size() - state.stragglers.size();
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
                      state.kind,
                      state.shard,
                      room - all.size(),
                      epoch,
                      now,
                      turnCursor,
                      runningCap));
      if (c.fenced()) {
        return new JobClaims.Claimed(true, all);
      }
      if (c.jobs().isEmpty()) {
        break;
      }
      all.addAll(c.jobs());
      // The turns list each owner once in rotation order before any owner's second job: the last
      // owner to appear is the farthest one served, after which the next turns begin.
      LinkedHashSet<String> served = new LinkedHashSet<>();
      c.jobs().forEach(job -> served.add(JobClaims.ownerKey(job)));
      turnCursor = List.copyOf(served).get(served.size() - 1);
    }
    return new JobClaims.Claimed(false, all);
  }

  /** The wake-up claim cursor for {@code epoch}; a new epoch starts from the head again. */
  private JobClaims.ClaimCursor cursor(long epoch) {
    if (epoch != cursorEpoch) {
      cursorEpoch = epoch;
      claimCursor = JobClaims.HEAD;
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
      metrics.claimed(state.kind, job, now);
      if (epoch == cursorEpoch && claimCursor.precedes(job)) {
        claimCursor = new JobClaims.ClaimCursor(job.priority, job.uid);
      }
      launch(new Task(job, now, epoch, traces.claimed(job, state.shard, claimStart, claimEnd)));
    }
  }

  /**
   * Starts the task of a job an enqueue on this replica wrote running under {@code epoch} in its
   * own commit ({@link ShardRunner#reserveStart}), as {@link #start} starts a claimed one. The
   * claim cursor stays where it is: jobs enqueued elsewhere meanwhile may sort before this one.
   * {@code heldAt} and {@code committedAt} bound the insert, the claim's step in the job's span.
   */
  void startEnqueued(Job job, long epoch, long heldAt, long committedAt) {
    context.metrics().claimed(state.kind, job, job.startedAt);
    launch(
        new Task(
            job,
            job.startedAt,
            epoch,
            context.traces().claimed(job, state.shard, heldAt, committedAt)));
  }

  /**
   * Puts a task on the books and hands it to a thread. When no thread takes it (the pool stopped),
   * it leaves the books again, so that its row, running under this owner's epoch with no task, is
   * the owner's orphan, which the next tick puts back to pending; the failure is thrown.
   */
  private void launch(Task task) {
    state.track(task);
    try {
      task.future = pool.submit(() -> run(task));
    } catch (RuntimeException e) {
      if (state.inFlight.remove(task.job.uid, task)) {
        state.dropped(task);
      }
      throw e;
    }
  }

  /**
   * Runs the kind's {@code process} for the task once the start gate lets it in, then asks for a
   * wake-up to write its outcome.
   */
  private void run(Task task) {
    try {
      state.gate.enter();
    } catch (InterruptedException e) {
      return; // stopped or abandoned while it waited (settled as never run), or the pool stopped
    }
    task.entered();
    if (!service.execute(task)) {
      state.leaveGate(task);
      return; // stopped or abandoned while it waited for a thread
    }
    if (context.wakeUps()) {
      state.requestWake();
    }
  }
}
