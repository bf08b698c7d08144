package io.asyncjobs.engine;

import io.agroal.api.AgroalDataSource;
import io.asyncjobs.queue.Job;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A job kind the tests steer: a job whose payload has {@code block: true} waits in {@code process}
 * until the test releases it; {@code fail} makes it throw; {@code fail_sqlstate} makes it throw an
 * SQL error with that state; {@code result} is returned as is, {@code result_with_nul} returns a
 * result PostgreSQL cannot store; {@code fail_io_attempts: N} fails its first N attempts with an
 * I/O error (transient), {@code fail_missing} with a missing file (not transient); {@code
 * guarded_effect} checks, through {@link #whileHeld}, that the job still runs under one of the
 * epochs it is given, after waiting at its first try until the test lets it go on ({@link
 * #guardReached}, {@link #letGuardGoOn}). It records the order jobs started in, the most that ran
 * at once, interrupts and cleanups.
 */
@Singleton // no client proxy: the tests read its fields directly
public class ControlledService extends JobService {

  final BlockingQueue<UUID> started = new LinkedBlockingQueue<>();
  final List<UUID> startOrder = Collections.synchronizedList(new ArrayList<>());
  final Set<UUID> interrupted = ConcurrentHashMap.newKeySet();
  final List<UUID> cleanups = Collections.synchronizedList(new ArrayList<>());
  final Set<UUID> failingCleanups = ConcurrentHashMap.newKeySet();
  final AtomicInteger active = new AtomicInteger();

  final AtomicInteger maxActive = new AtomicInteger();
  volatile CleanupObserver cleanupObserver = job -> {};
  private final Map<UUID, CountDownLatch> gates = new ConcurrentHashMap<>();
  private final Map<UUID, Semaphore> stepGates = new ConcurrentHashMap<>();
  private final Map<UUID, Semaphore> steppedGates = new ConcurrentHashMap<>();
  private volatile boolean releaseAll;

  /** The epochs each try of a guarded effect was given, in order. */
  final List<List<Long>> guardTries = Collections.synchronizedList(new ArrayList<>());

  private final Semaphore guardReached = new Semaphore(0);
  private final Semaphore guardGoesOn = new Semaphore(0);

  @Inject AgroalDataSource dataSource;

  /** Sees each cleanup call before it returns. */
  interface CleanupObserver {
    void onCleanup(Job job);
  }

  @Override
  public String kind() {
    return "controlled";
  }

  @Override
  public String title() {
    return "Controlled by tests";
  }

  @Override
  protected Map<String, Object> process(Job job) throws Exception {
    if (job.payload.get("progress") instanceof Number fraction) {
      reportProgress(fraction.doubleValue(), 5L);
    }
    int now = active.incrementAndGet();
    maxActive.accumulateAndGet(now, Math::max);
    startOrder.add(job.uid);
    started.add(job.uid);
    try {
      if (job.payload.get("progress_steps") instanceof List<?> steps) {
        for (Object step : steps) {
          if (!steps(job.uid).tryAcquire(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("test never stepped job " + job.uid);
          }
          reportProgress(((Number) step).doubleValue(), null);
          stepped(job.uid).release();
        }
      }
      if (Boolean.TRUE.equals(job.payload.get("block")) && !releaseAll) {
        awaitGate(job);
      }
      if (job.payload.get("fail_io_attempts") instanceof Number n && job.attempt < n.intValue()) {
        throw new java.io.IOException("connection reset at attempt " + (job.attempt + 1));
      }
      if (job.payload.get("fail_missing") instanceof String file) {
        throw new java.nio.file.NoSuchFileException(file);
      }
      if (job.payload.get("fail") instanceof String message) {
        throw new IllegalStateException(message);
      }
      if (job.payload.get("fail_sqlstate") instanceof String state) {
        throw new java.sql.SQLException("the database said " + state, state);
      }
      if (Boolean.TRUE.equals(job.payload.get("guarded_effect"))) {
        return Map.of("landed", whileHeld(epochs -> guardedEffect(job, epochs)));
      }
      if (Boolean.TRUE.equals(job.payload.get("result_with_nul"))) {
        return Map.of("text", "a\u0000b");
      }
      @SuppressWarnings("unchecked")
      Map<String, Object> result = (Map<String, Object>) job.payload.get("result");
      return result == null ? Map.of() : result;
    } catch (InterruptedException e) {
      interrupted.add(job.uid);
      throw e;
    } finally {
      active.decrementAndGet();
    }
  }

  private boolean guardedEffect(Job job, long[] epochs) throws SQLException {
    guardTries.add(Arrays.stream(epochs).boxed().toList());
    if (guardTries.size() == 1) {
      guardReached.release();
      try {
        if (!guardGoesOn.tryAcquire(10, TimeUnit.SECONDS)) {
          throw new IllegalStateException("test never let the guarded effect go on");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new SQLException("interrupted", e);
      }
    }
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT 1 FROM jobs WHERE uid = ? AND status = 'running' AND epoch = ANY (?)")) {
      ps.setObject(1, job.uid);
      ps.setArray(2, c.createArrayOf("bigint", Arrays.stream(epochs).boxed().toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  /** Waits until a guarded effect has read its epochs and waits at its first try. */
  void guardReached() throws InterruptedException {
    if (!guardReached.tryAcquire(5, TimeUnit.SECONDS)) {
      throw new AssertionError("no guarded effect reached its first try within 5 s");
    }
  }

  /** Lets the waiting guarded effect run its first try. */
  void letGuardGoOn() {
    guardGoesOn.release();
  }

  @Override
  protected void cleanup(Job job) {
    cleanupObserver.onCleanup(job);
    cleanups.add(job.uid);
    if (failingCleanups.contains(job.uid)) {
      throw new IllegalStateException("disk on fire");
    }
  }

  private void awaitGate(Job job) throws InterruptedException {
    CountDownLatch gate = gate(job.uid);
    if (releaseAll) {
      // reset() began after this job checked releaseAll and may have counted the gates down
      // before this one was made; it would then wait for this job in vain, and clear the gate
      // with the job still held by it (WakeUpTest once had a job held so for 60 s, which failed
      // the tests after it).
      return;
    }
    try {
      if (!gate.await(60, TimeUnit.SECONDS)) {
        throw new IllegalStateException("test never released job " + job.uid);
      }
    } catch (InterruptedException e) {
      if (!Boolean.TRUE.equals(job.payload.get("ignore_interrupt"))) {
        throw e;
      }
      interrupted.add(job.uid);
      // A job that does not honour interrupts: it goes on until released.
      while (true) {
        try {
          gate(job.uid).await();
          return;
        } catch (InterruptedException again) {
          // keep waiting
        }
      }
    }
  }

  /** Waits until the task of a job has returned. */
  void awaitReturned(UUID uid) throws InterruptedException {
    if (!awaitTask(uid, Duration.ofSeconds(5))) {
      throw new AssertionError("job " + uid + " did not return within 5 s");
    }
  }

  /** Lets a job with progress_steps report its next step, and waits until it has. */
  void step(UUID uid) throws InterruptedException {
    steps(uid).release();
    if (!stepped(uid).tryAcquire(5, TimeUnit.SECONDS)) {
      throw new AssertionError("job " + uid + " did not report its step");
    }
  }

  private Semaphore steps(UUID uid) {
    return stepGates.computeIfAbsent(uid, u -> new Semaphore(0));
  }

  private Semaphore stepped(UUID uid) {
    return steppedGates.computeIfAbsent(uid, u -> new Semaphore(0));
  }

  /** Reports progress as if from inside the process of the job running on this thread. */
  void reportFromOutside(double fraction) {
    reportProgress(fraction, null);
  }

  /** Lets a blocked job finish. */
  void release(UUID uid) {
    gate(uid).countDown();
  }

  /** The next job to start, waiting up to five seconds. */
  UUID nextStarted() throws InterruptedException {
    UUID uid = started.poll(5, TimeUnit.SECONDS);
    if (uid == null) {
      throw new AssertionError("no job started within 5 s");
    }
    return uid;
  }

  /** Releases everything, waits for the threads, forgets what was recorded. */
  void reset() throws InterruptedException {
    releaseAll = true;
    guardGoesOn.release();
    gates.values().forEach(CountDownLatch::countDown);
    awaitTasks(Duration.ofSeconds(10));
    // Gates go before releaseAll does: a job that makes its gate meanwhile still sees releaseAll
    // once its gate exists and goes on, where in the other order it could make a gate that the
    // clear then dropped, and wait on it with nobody to count it down.
    gates.clear();
    stepGates.clear();
    steppedGates.clear();
    started.clear();
    startOrder.clear();
    interrupted.clear();
    cleanups.clear();
    failingCleanups.clear();
    maxActive.set(0);
    guardTries.clear();
    guardReached.drainPermits();
    guardGoesOn.drainPermits();
    cleanupObserver = job -> {};
    releaseAll = false;
  }

  private CountDownLatch gate(UUID uid) {
    return gates.computeIfAbsent(uid, u -> new CountDownLatch(1));
  }
}
