package io.asyncjobs.engine;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.asyncjobs.config.Shards;
import io.asyncjobs.lock.OwnerLock;
import io.asyncjobs.lock.Trust;
import io.asyncjobs.queue.EnqueueRequest;
import io.asyncjobs.queue.JobQueue;
import io.asyncjobs.queue.JobStatus;
import io.asyncjobs.queue.Owner;
import io.asyncjobs.settings.SettingsOverride;
import io.asyncjobs.settings.SettingsStore;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.Listening;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** With wake-ups on and no scheduled tick, jobs still start and finish at once. */
@QuarkusTest
@TestProfile(WakeUpTest.WakeUps.class)
public class WakeUpTest {

  @Inject ControlledService service;
  @Inject JobQueue queue;
  @Inject Database db;
  @Inject SettingsStore settings;
  @Inject io.asyncjobs.operations.ServicePauses pauses;
  @Inject OwnerLock realLock;
  @Inject ServiceManager manager;

  @Test
  void shouldStartAJobOnNotifyAndReapItWhenItsTaskFinishes() throws Exception {
    db.clearJobs();
    UUID uid = queue.enqueue("controlled", Map.of("block", true), null, null, null);

    // No runOnce() here and no tick: only the enqueue's wake-up can start it (in process, since
    // this replica owns the kind).
    assertThat(service.nextStarted()).isEqualTo(uid);

    service.release(uid);
    // The finished task wakes its service, which reaps it; no tick runs in tests.
    assertThat(awaitFinalStatus(uid)).isEqualTo(JobStatus.DONE);
  }

  @Test
  void shouldWakeTheRunnerHereWithoutANotificationAndNotifyWhereNoRunnerHereClaims()
      throws Exception {
    db.clearJobs();
    service.reset();
    service.runOnce(); // the runner here holds the shard's lock and may claim
    try (Listening listener = new Listening(db.dataSource(), JobQueue.ENQUEUED_CHANNEL)) {
      UUID uid = queue.enqueue("controlled", Map.of("block", true), null, null, null);

      // Its owner runs here: the commit wakes it in process, and no NOTIFY crosses the database,
      // though the queue was empty.
      assertThat(service.nextStarted()).isEqualTo(uid);
      assertThat(listener.received(200)).as("notifications for an enqueue woken here").isEmpty();

      // No runner of this kind here: its owner may run elsewhere, idle, and is notified.
      queue.enqueue("disabledkind", Map.of(), null, null, null);
      assertThat(listener.received(200)).containsExactly("disabledkind");

      service.release(uid);
      assertThat(awaitFinalStatus(uid)).isEqualTo(JobStatus.DONE);
    } finally {
      db.update("DELETE FROM jobs WHERE kind = 'disabledkind'");
    }
  }

  @Test
  void shouldNotifyWhenTheRunnerHereMayNotClaim() throws Exception {
    db.clearJobs();
    service.reset();
    SteerableLock steered = new SteerableLock(realLock);
    service.attachLock(steered);
    try (Listening listener = new Listening(db.dataSource(), JobQueue.ENQUEUED_CHANNEL)) {
      for (Trust trust : new Trust[] {Trust.FINISH, Trust.NONE}) {
        // A late confirmation, or a lost lock: another replica may own the shard by now.
        steered.trust = trust;
        queue.enqueue("controlled", Map.of(), null, null, null);
        assertThat(listener.received(200)).as("under " + trust).containsExactly("controlled");
        db.update("DELETE FROM jobs WHERE kind = 'controlled'");
      }
    } finally {
      steered.trust = null;
      service.attachLock(realLock);
      service.runOnce();
      service.reset();
    }
  }

  /**
   * On a replica whose lock is not held, neither an enqueue made there nor a notification of one
   * wakes the runner: its wake-up thread would only find that it may do nothing. Under a lost lock
   * nothing consumes a request, so one shows; both made one before.
   */
  @Test
  void shouldNotWakeARunnerHereThatMayNotClaim() throws Exception {
    db.clearJobs();
    service.reset();
    service.runOnce(); // claims nothing: no claim is wanted after it
    SteerableLock steered = new SteerableLock(realLock);
    service.attachLock(steered);
    try {
      steered.trust = Trust.NONE;
      queue.enqueue("controlled", Map.of(), null, null, null);
      manager.wakeFor("controlled"); // the enqueue's notification, as the listener hands it on

      assertThat(service.claimWanted(Shards.ALL)).as("a claim asked of the runner here").isFalse();

      steered.trust = null;
      queue.enqueue("controlled", Map.of("block", true), null, null, null);
      assertThat(service.nextStarted()).as("woken once it may claim again").isNotNull();
    } finally {
      steered.trust = null;
      service.attachLock(realLock);
      db.update("DELETE FROM jobs WHERE status = 'pending'");
      service.reset();
      service.runOnce();
      service.reset();
    }
  }

  @Test
  void shouldStartAHigherPriorityJobNextThoughTheQueueWasBusy() throws Exception {
    db.clearJobs();
    service.reset();
    settings.update("controlled", new SettingsOverride(null, 1, null, null));
    service.runOnce(); // reads the settings; nothing is pending yet
    try {
      UUID first = queue.enqueue("controlled", Map.of("block", true), "user", "a", null);
      assertThat(service.nextStarted()).isEqualTo(first);
      queue.enqueue("controlled", Map.of("block", true), "user", "a", null);
      // The queue is busy, so a job of the default priority wakes nobody; this one asks for the
      // head, as it sorts before the claim cursor (the first job).
      UUID urgent = queue.enqueue("controlled", Map.of("block", true), "user", "a", null, 5);

      service.release(first);

      assertThat(service.nextStarted()).as("the next job started").isEqualTo(urgent);
    } finally {
      db.update("DELETE FROM jobs WHERE status = 'pending'"); // nothing more starts
      db.update("DELETE FROM service_settings");
      service.reset();
      service.runOnce(); // reaps, and reads the settings back
      service.reset();
    }
  }

  @Test
  void shouldStartTheWaitingJobsOfAPausedKindTheMomentItIsResumed() throws Exception {
    db.clearJobs();
    service.reset();
    pauses.pause("controlled", "user:root", null);
    try {
      service.runOnce(); // reads the pause
      UUID waiting = queue.enqueue("controlled", Map.of(), null, null, null);
      assertThat(service.runOnce().claimed()).isZero();
      assertThat(queue.getJob(waiting).orElseThrow().status).isEqualTo(JobStatus.PENDING);

      pauses.resume("controlled");

      // No runOnce() and no tick: only the resume's NOTIFY can start it.
      assertThat(service.nextStarted()).isEqualTo(waiting);
      assertThat(awaitFinalStatus(waiting)).isEqualTo(JobStatus.DONE);
    } finally {
      db.update("DELETE FROM service_pauses");
      service.runOnce();
    }
  }

  @Test
  void shouldSendTheCallbackOfAJobEndedByAWakeUpWithoutATick() throws Exception {
    db.clearJobs();
    BlockingQueue<String> posted = new LinkedBlockingQueue<>();
    HttpServer receiver =
        HttpServer.create(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0), 0);
    receiver.createContext(
        "/hook",
        exchange -> {
          posted.add(new String(exchange.getRequestBody().readAllBytes(), UTF_8));
          exchange.sendResponseHeaders(204, -1);
          exchange.close();
        });
    receiver.start();
    try {
      // A job without a callback first, whose wake-up finds no callback in flight and skips the
      // lookup; the next job's must not skip it.
      UUID plain = queue.enqueue("controlled", Map.of(), null, null, null);
      assertThat(awaitFinalStatus(plain)).isEqualTo(JobStatus.DONE);
      String url = "http://127.0.0.1:" + receiver.getAddress().getPort() + "/hook";
      UUID told =
          queue
              .enqueue(
                  List.of(
                      EnqueueRequest.of("controlled", new Owner("user", "alice"), Map.of())
                          .withCallbackUrl(url)))
              .get(0)
              .uid();

      // No tick: the wake-up that writes the outcome starts the delivery.
      String body = posted.poll(10, TimeUnit.SECONDS);
      assertThat(body).as("the callback's POST").isNotNull().contains(told.toString());
      assertThat(posted).isEmpty();
    } finally {
      receiver.stop(0);
    }
  }

  @Test
  void shouldReapEveryJobByItsOwnWakeUpWithoutATick() throws Exception {
    db.clearJobs();
    // One job at a time, so nothing but its own finished task can get it reaped. A wake-up that
    // ran before the outcome was recorded used to leave a job running until the next tick.
    for (int i = 0; i < 100; i++) {
      UUID uid = queue.enqueue("controlled", Map.of("result", Map.of("i", i)), null, null, null);
      assertThat(awaitFinalStatus(uid)).as("job %d", i).isEqualTo(JobStatus.DONE);
    }
  }

  @Test
  void shouldGiveWayToAClaimMidSweepAndSweepOnThroughWakeUps() throws Exception {
    db.clearJobs();
    service.reset();
    db.update(
        "INSERT INTO jobs (uid, kind, status, payload, created_at, completed_at, updated_at,"
            + " expires_at) SELECT gen_random_uuid(), 'controlled', 'done', '{}',"
            + " now() - interval '8 days', now() - interval '8 days', now() - interval '8 days',"
            + " now() - interval '1 day' FROM generate_series(1, 2000)");
    // A caller enqueues a job while the tick's sweep cleans up its 150th expired one; its wake-up
    // is asked for at once, as the enqueue's NOTIFY does a moment later. The waker takes it and
    // waits for the run lock. At each later cleanup, the test notes whether the job is claimed.
    AtomicInteger cleanupsSeen = new AtomicInteger();
    AtomicReference<UUID> enqueued = new AtomicReference<>();
    List<JobStatus> statusAtLaterCleanups = Collections.synchronizedList(new ArrayList<>());
    service.cleanupObserver =
        job -> {
          int seen = cleanupsSeen.incrementAndGet();
          if (seen == 150) {
            enqueued.set(queue.enqueue("controlled", Map.of(), null, null, null));
            service.requestWake();
          } else if (seen > 150) {
            statusAtLaterCleanups.add(queue.getJob(enqueued.get()).orElseThrow().status);
          }
        };

    TickResult tick = service.runOnce();

    // The sweep's budget (10 s) would have swept everything; it stopped for the claim instead.
    // Before, it looked for wake-ups not yet taken, found none, and held the claim back.
    assertThat(tick.swept()).as("swept by the tick before it gave way").isEqualTo(150);
    // No more runOnce(): only wake-ups can sweep on. They used to claim and stop, so the rest
    // waited for later ticks.
    long left = expired();
    for (int i = 0; i < 500 && left > 0; i++) {
      Thread.sleep(10);
      left = expired();
    }
    assertThat(left).as("expired jobs left without another tick").isZero();
    assertThat(service.cleanups).hasSize(2_000).doesNotHaveDuplicates();
    // The caller's job was claimed before the sweep cleaned up one more expired job.
    assertThat(statusAtLaterCleanups).hasSize(1_850).doesNotContain(JobStatus.PENDING);
    assertThat(awaitFinalStatus(enqueued.get())).isEqualTo(JobStatus.DONE);
  }

  @Test
  void shouldTryATransientFailureAgainAtItsTimeWithoutATick() throws Exception {
    db.clearJobs();
    service.reset();
    settings.update(
        "controlled", new SettingsOverride(null, null, null, null, null, null, null, 2));
    service.runOnce(); // reads the settings; nothing is pending yet
    try {
      UUID uid = queue.enqueue("controlled", Map.of("fail_io_attempts", 1), null, null, null);
      // The wake-up that writes the failed attempt must not write it as a plain failure (it
      // used to go with the claim's statement), and must arm the timer for the retry: there is
      // no tick to release it.
      assertThat(awaitFinalStatus(uid)).isEqualTo(JobStatus.DONE);
      assertThat(queue.getJob(uid).orElseThrow().attempt).isEqualTo(1);
      assertThat(service.startOrder).containsExactly(uid, uid);
    } finally {
      db.update("DELETE FROM service_settings");
      service.reset();
      service.runOnce();
      service.reset();
    }
  }

  private long expired() {
    return ((Number)
            db.query(
                    "SELECT count(*) AS n FROM jobs WHERE kind = 'controlled' AND expires_at <= now()")
                .get(0)
                .get("n"))
        .longValue();
  }

  private JobStatus awaitFinalStatus(UUID uid) throws InterruptedException {
    JobStatus status = JobStatus.PENDING;
    for (int i = 0; i < 200 && !status.isFinal(); i++) {
      Thread.sleep(10);
      status = queue.getJob(uid).orElseThrow().status;
    }
    return status;
  }

  /** Turns wake-ups on; the scheduled tick stays off as in every test. */
  public static class WakeUps implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      // Small batches and a long budget: what ends a sweep early is a claim, not its budget.
      // The controlled kind retries after 200 to 400 ms, so a retry lands within the wait below.
      return Map.of(
          "jobs.wake-ups",
          "true",
          "jobs.sweep-batch-size",
          "100",
          "jobs.sweep-budget",
          "10s",
          "jobs.services.controlled.retry-backoff",
          "400ms");
    }
  }
}
