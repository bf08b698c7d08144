package io.asyncjobs.engine;

import io.asyncjobs.config.Shards;
import io.asyncjobs.lock.OwnerLock;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What one shard's runner holds between runs and hands to the roles of a run ({@link Reaper},
 * {@link OrphanRecoverer}, {@link Refiller}, {@link ProgressWriter}, {@link CallbackStarter}): its
 * lock, the tasks in flight and those whose threads have not returned, and the flags by which an
 * enqueue, a finished task, a rescue or a handover asks for a wake-up. The roles read and change
 * it; none of them knows the runner, which alone decides their order.
 */
final class ShardState {

  final String kind;
  final String shard;
  private final JobTraces traces;

  private volatile OwnerLock lock;

  /** Tasks started by this runner whose fate is not yet committed. */
  final Map<UUID, Task> inFlight = new ConcurrentHashMap<>();

  /**
   * Tasks settled (written, or no longer this runner's) whose threads have not yet returned; they
   * hold a slot, so a task that ignores its interrupt never lets more jobs run than allowed.
   */
  final List<Task> stragglers = new CopyOnWriteArrayList<>();

  /**
   * Bounds the tasks begun whose outcome is not yet committed; see {@link StartGate}. Its limit is
   * set by each run's refill.
   */
  final StartGate gate = new StartGate(Integer.MAX_VALUE);

  /** Tasks in flight whose job has a callback URL. */
  private final AtomicInteger withCallback = new AtomicInteger();

  /** Released to wake the runner's wake-up thread; permits coalesce into one run. */
  final Semaphore wakeSignal = new Semaphore(0);

  /**
   * Whether a claim was asked for (an enqueue, a finished task, a handover) since a run last
   * claimed. A sweep gives way to it; the wake-ups a sweep asks for itself leave it alone.
   */
  final AtomicBoolean claimWanted = new AtomicBoolean();

  /**
   * Set when older pending jobs appeared (a retry, a rescue): the next wake-up claims from the
   * head.
   */
  final AtomicBoolean rewind = new AtomicBoolean();

  /** Set while the application shuts down or the shard is handed over: nothing new is claimed. */
  volatile boolean draining;

  ShardState(String kind, String shard, OwnerLock lock, JobTraces traces) {
    this.kind = kind;
    this.shard = shard;
    this.lock = lock;
    this.traces = traces;
  }

  /** The shard's lock now; a test may attach another one between runs. */
  OwnerLock lock() {
    return lock;
  }

  void attachLock(OwnerLock ownerLock) {
    this.lock = ownerLock;
  }

  /** The kind, and the shard when it is not the one shard of the unsharded default. */
  String label() {
    return Shards.ALL.equals(shard) ? kind : kind + " (shard " + shard + ")";
  }

  /** Asks for a run as soon as possible, on the runner's own thread. Coalesces. */
  void requestWake() {
    claimWanted.set(true);
    wakeSignal.release();
  }

  /** Asks for a run that claims from the head of the queue, not after the wake-up cursor. */
  void requestWakeFromHead() {
    rewind.set(true);
    claimWanted.set(true);
    wakeSignal.release();
  }

  /**
   * Removes settled tasks and ends their spans; those whose threads still run keep a slot until
   * they return.
   */
  void forget(List<Task> settled) {
    for (Task task : settled) {
      traces.end(task);
      if (inFlight.remove(task.job.uid, task)) {
        dropped(task);
      }
      if (!task.returned()) {
        stragglers.add(task);
      }
    }
  }

  /** Starts a task's books: it is in flight until {@link #forget}, or {@link #dropped}. */
  void track(Task task) {
    if (task.job.callbackUrl != null) {
      withCallback.incrementAndGet();
    }
    inFlight.put(task.job.uid, task);
  }

  /** A task that left {@link #inFlight}: it no longer counts in the start gate or the callbacks. */
  void dropped(Task task) {
    if (task.job.callbackUrl != null) {
      withCallback.decrementAndGet();
    }
    leaveGate(task);
  }

  /** The task's fate is settled (or it never began): it no longer counts in the start gate. */
  void leaveGate(Task task) {
    if (task.leaveGate()) {
      gate.leave();
    }
  }

  /**
   * Whether a task in flight has a callback to send when it ends; a wake-up that wrote outcomes
   * looks for due callbacks only then (the tick looks for every other one).
   */
  boolean callbacksInFlight() {
    return withCallback.get() > 0;
  }
}
