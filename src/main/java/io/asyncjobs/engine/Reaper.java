package io.asyncjobs.engine;

import io.asyncjobs.config.ServiceSettings;
import io.asyncjobs.lock.Trust;
import io.asyncjobs.queue.Completion;
import io.asyncjobs.queue.JobRecovery;
import io.asyncjobs.queue.StoreException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * The first step of a run, reap: keeps the shard's running tasks under a new epoch of the lock
 * (adopt), stops those past their timeout or whose cancel was requested, and writes what became of
 * every task that is ready (through {@link Outcomes}), so that only tasks whose fate is committed
 * leave the shard's books. It also ends work the shard may no longer do: every task when the lock
 * is lost, and the handover's last step.
 */
final class Reaper {

  private static final Logger LOG = Logger.getLogger(Reaper.class);

  /** How long a handover waits for interrupted tasks to return before it releases their jobs. */
  private static final Duration HANDBACK_WAIT = Duration.ofSeconds(2);

  private final EngineContext context;
  private final ShardState state;
  private final Outcomes outcomes;

  Reaper(EngineContext context, ShardState state, Outcomes outcomes) {
    this.context = context;
    this.state = state;
    this.outcomes = outcomes;
  }

  /**
   * Reaps as far as {@code trust} allows: under {@link Trust#NONE} interrupts every running task;
   * otherwise adopts (under {@link Trust#CLAIM} only) and stops overdue tasks. Then writes the
   * outcomes of every ready task, whatever the trust (each under the epoch its row carries).
   *
   * @return how many tasks were settled and left the shard's books
   */
  int runOnce(Trust trust, long epoch, ServiceSettings settings, Instant now, Tally tally) {
    if (trust == Trust.NONE) {
      abandonWork();
    } else {
      if (trust == Trust.CLAIM) {
        adopt(epoch, now, tally);
      }
      stopOverdue(settings, now, tally);
    }
    return settle(settings, now, tally);
  }

  /**
   * The finished outcomes a wake-up's claim carries in its own statement, and what is left.
   *
   * @param tasks the tasks whose outcomes the claim writes (they are still in flight)
   * @param completions their outcomes, as stored, in the same order
   */
  record Riders(List<Task> tasks, List<Completion> completions) {}

  /**
   * The wake-up's reap: when {@code claimCarries}, the plain outcomes (done or failed, neither a
   * retry nor a transient failure) of the current epoch are left for the claim to write in the same
   * statement; every other ready task is written now.
   *
   * @return the outcomes left for the claim, none when {@code claimCarries} is false
   */
  Riders reapOnWake(
      boolean claimCarries, long epoch, ServiceSettings settings, Instant now, Tally tally) {
    List<Task> combined = new ArrayList<>();
    List<Completion> completions = new ArrayList<>();
    if (claimCarries) {
      for (Task task : state.inFlight.values()) {
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
    List<Task> rest = new ArrayList<>(state.inFlight.values());
    // A set: up to claim-ahead's 500 riders, each looked up among as many tasks, on every wake-up.
    rest.removeAll(new HashSet<>(combined));
    state.forget(outcomes.write(rest, settings, now, tally));
    return new Riders(combined, completions);
  }

  /**
   * Tasks whose rows were claimed under an earlier epoch of this replica and that still run: after
   * the lock was taken back, their rows get the new epoch, so that they may finish. Nobody else
   * touched a row that is still running under the epoch its task claimed it with.
   */
  private void adopt(long epoch, Instant now, Tally tally) {
    Map<UUID, long[]> earlier = new HashMap<>();
    for (Task task : state.inFlight.values()) {
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
          "%s: adopting running jobs failed, retrying next run: %s", state.label(), e.getMessage());
      return;
    }
    if (adopted.fenced()) {
      state.lock().superseded(epoch);
      return;
    }
    int lost = 0;
    for (UUID uid : earlier.keySet()) {
      Task task = state.inFlight.get(uid);
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
        state.label(), adopted.adopted().size(), epoch, lost);
  }

  /** Interrupts tasks past their timeout and tasks whose cancel was requested. */
  private void stopOverdue(ServiceSettings settings, Instant now, Tally tally) {
    List<UUID> working = new ArrayList<>();
    for (Task task : state.inFlight.values()) {
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
      Task task = state.inFlight.get(uid);
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

  /**
   * Writes what became of every ready task and forgets those settled.
   *
   * @return how many were settled
   */
  int settle(ServiceSettings settings, Instant now, Tally tally) {
    List<Task> settled = outcomes.write(state.inFlight.values(), settings, now, tally);
    state.forget(settled);
    return settled.size();
  }

  /**
   * Interrupts every running task because the lock can no longer be trusted. Needs no database and
   * no run lock, so it works while a run hangs on a database that went away.
   */
  void abandonWork() {
    int abandoned = 0;
    for (Task task : state.inFlight.values()) {
      if (task.working()) {
        task.abandon();
        abandoned++;
      }
    }
    if (abandoned > 0) {
      LOG.warnf(
          "%s: not the owner any more; interrupted %d running job(s), which go back to pending once"
              + " they stop",
          state.label(), abandoned);
    }
  }

  /**
   * The last step of a handover, under the run lock: interrupts the tasks still running and waits a
   * moment for them to return, writes the outcomes of those that finished, and, when {@code
   * exiting}, puts the rest back to pending without counting a retry (a job whose cancel was
   * requested fails as cancelled instead). Without {@code exiting} a task that ignored its
   * interrupt keeps its row running under its epoch, so that nobody else can start it while its
   * thread still runs.
   *
   * @return how many jobs went back to pending
   */
  int handBack(ServiceSettings settings, boolean exiting) {
    List<Task> stopped = new ArrayList<>();
    for (Task task : state.inFlight.values()) {
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
    state.forget(outcomes.write(state.inFlight.values(), settings, now, tally));
    // Tasks that ignored their interrupt: the process is about to exit, which ends them.
    Map<Long, List<UUID>> stuck = new HashMap<>();
    for (Task task : state.inFlight.values()) {
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
      for (Task task : state.inFlight.values()) {
        context.traces().end(task);
        if (state.inFlight.remove(task.job.uid, task)) {
          state.dropped(task);
        }
      }
    }
    if (tally.released > 0 || tally.done + tally.failed > 0) {
      LOG.infof(
          "%s: handed over: %d finished job(s) written, %d put back to pending",
          state.label(), tally.done + tally.failed, tally.released);
    }
    return tally.released;
  }

  /**
   * Waits until every one of {@code tasks} has returned from {@code process}, or the deadline.
   *
   * @return false when some were still running at the deadline
   */
  static boolean awaitReturned(Collection<Task> tasks, long deadlineNanos)
      throws InterruptedException {
    for (Task task : tasks) {
      long left = deadlineNanos - System.nanoTime();
      if (left <= 0 || !task.returnedLatch.await(left, TimeUnit.NANOSECONDS)) {
        return false;
      }
    }
    return true;
  }
}
