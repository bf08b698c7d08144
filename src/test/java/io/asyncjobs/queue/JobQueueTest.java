package io.asyncjobs.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.asyncjobs.settings.SettingsOverride;
import io.asyncjobs.settings.SettingsStore;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.TestClock;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

@QuarkusTest
class JobQueueTest {

  private static final Instant T0 = Instant.parse("2026-03-01T10:00:00Z");
  private static final Owner ALICE = new Owner("user", "alice");
  private static final Owner BOB = new Owner("user", "bob");

  @Inject JobQueue queue;
  @Inject JobBulk bulk;
  @Inject TestClock clock;
  @Inject Database db;
  @Inject SettingsStore settings;

  @BeforeEach
  void setUp() {
    db.clearJobs();
    clock.set(T0);
  }

  @AfterEach
  void tearDown() {
    clock.reset();
  }

  @Test
  void shouldEnqueueAPendingJobThatExpiresOneRetentionLater() {
    UUID uid = queue.enqueue("zip", Map.of("paths", List.of("a")), "user", "alice", "a.zip");

    Job job = queue.getJob(uid).orElseThrow();
    assertThat(job.kind).isEqualTo("zip");
    assertThat(job.status).isEqualTo(JobStatus.PENDING);
    assertThat(job.owner()).isEqualTo(ALICE);
    assertThat(job.preferredName).isEqualTo("a.zip");
    assertThat(job.retryCount).isZero();
    assertThat(job.createdAt).isEqualTo(T0);
    assertThat(job.updatedAt).isEqualTo(T0);
    assertThat(job.expiresAt).isEqualTo(T0.plus(Duration.ofDays(7)));
    assertThat(job.startedAt).isNull();
    assertThat(job.result).isNull();
    assertThat(uid.version()).isEqualTo(7);
  }

  @Test
  void shouldUseTheServiceRetentionOverrideForExpiry() {
    // application.properties for tests sets jobs.services.seo.retention-seconds=3600
    UUID uid = queue.enqueue("seo", Map.of(), null, null, null);

    assertThat(queue.getJob(uid).orElseThrow().expiresAt).isEqualTo(T0.plusSeconds(3600));
  }

  @Test
  void shouldKeepJobsForTheRetentionAnAdminSetWhenEnqueuedCancelledOrRetried() {
    settings.update("zip", new SettingsOverride(120L, null, null, null));
    try {
      UUID enqueued = queue.enqueue("zip", Map.of(), "user", "alice", null);
      assertThat(queue.getJob(enqueued).orElseThrow().expiresAt)
          .as("enqueued")
          .isEqualTo(T0.plusSeconds(120));

      // Two requests, so that the list takes JobInsertMany (a list of one takes JobInsertOne).
      EnqueueRequest inList = EnqueueRequest.of("zip", ALICE, Map.of());
      UUID batched = queue.enqueue(List.of(inList, inList)).get(1).uid();
      assertThat(queue.getJob(batched).orElseThrow().expiresAt)
          .as("enqueued in a batch")
          .isEqualTo(T0.plusSeconds(120));

      clock.set(T0.plusSeconds(30));
      assertThat(bulk.cancelJob(enqueued)).isEqualTo(CancelOutcome.CANCELLED);
      assertThat(queue.getJob(enqueued).orElseThrow().expiresAt)
          .as("cancelled")
          .isEqualTo(T0.plusSeconds(30 + 120));

      clock.set(T0.plusSeconds(60));
      assertThat(bulk.retryJob(enqueued)).isTrue();
      assertThat(queue.getJob(enqueued).orElseThrow().expiresAt)
          .as("retried")
          .isEqualTo(T0.plusSeconds(60 + 120));
    } finally {
      settings.update("zip", SettingsOverride.NONE);
    }
  }

  @Test
  void shouldRoundTripANestedUnicodePayload() {
    Map<String, Object> payload =
        Map.of(
            "name", "Ünïcødé ✓ 日本語 🚀",
            "paths", List.of("docs/ä.txt", "naïve/😀.md"),
            "options", Map.of("level", 6, "deep", Map.of("flag", true, "ratio", 0.25)),
            "nothing", Collections.singletonMap("x", null));

    UUID uid = queue.enqueue("zip", payload, "user", "alice", "résumé.zip");

    Job job = queue.getJob(uid).orElseThrow();
    assertThat(job.payload).isEqualTo(payload);
    assertThat(job.preferredName).isEqualTo("résumé.zip");
    // Stored as real JSON, queryable by the database.
    assertThat(db.query("SELECT payload->'options'->'deep'->>'ratio' AS r FROM jobs"))
        .extracting(r -> r.get("r"))
        .containsExactly("0.25");
  }

  @Test
  void shouldRejectMalformedArgumentsAndStoreNothing() {
    assertThatThrownBy(() -> queue.enqueue("Zip!", Map.of(), null, null, null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("kind");
    assertThatThrownBy(() -> queue.enqueue("zip", null, null, null, null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("payload");
    assertThatThrownBy(() -> queue.enqueue("zip", Map.of(), "user", null, null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("owner");
    assertThatThrownBy(() -> queue.enqueue("zip", Map.of(), null, null, "x".repeat(256)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("preferred name");
    assertThat(db.query("SELECT uid FROM jobs")).isEmpty();
  }

  @Test
  void shouldKeepEachThreadsEnqueueOrderInUidOrderAcrossEightThreads() throws Exception {
    clock.reset();
    int threads = 8;
    int perThread = 50;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CountDownLatch start = new CountDownLatch(1);
    List<Future<List<UUID>>> futures = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int thread = t;
      futures.add(
          pool.submit(
              () -> {
                start.await();
                List<UUID> mine = new ArrayList<>();
                for (int i = 0; i < perThread; i++) {
                  mine.add(queue.enqueue("zip", Map.of("t", thread, "i", i), null, null, null));
                }
                return mine;
              }));
    }
    start.countDown();
    List<List<UUID>> perThreadUids = new ArrayList<>();
    for (Future<List<UUID>> f : futures) {
      perThreadUids.add(f.get());
    }
    pool.shutdown();

    // The database's own uuid ordering is the claim order.
    List<Map<String, Object>> rows =
        db.query(
            "SELECT (payload->>'t')::int AS t, (payload->>'i')::int AS i FROM jobs ORDER BY uid");
    assertThat(rows).hasSize(threads * perThread);
    int[] lastSeen = new int[threads];
    Arrays.fill(lastSeen, -1);
    for (Map<String, Object> row : rows) {
      int t = (Integer) row.get("t");
      int i = (Integer) row.get("i");
      assertThat(i).as("thread %d's jobs in claim order", t).isEqualTo(lastSeen[t] + 1);
      lastSeen[t] = i;
    }
    // Java's UUID.compareTo is signed, so compare as the database does.
    for (List<UUID> mine : perThreadUids) {
      for (int i = 1; i < mine.size(); i++) {
        assertThat(mine.get(i).toString()).isGreaterThan(mine.get(i - 1).toString());
      }
    }
  }

  @Test
  void shouldStampCreationTimeFromTheInjectedClock() {
    clock.set(T0.plus(3, ChronoUnit.DAYS));
    UUID uid = queue.enqueue("zip", Map.of(), null, null, null);
    assertThat(queue.getJob(uid).orElseThrow().createdAt).isEqualTo(T0.plus(3, ChronoUnit.DAYS));
  }

  @Test
  void shouldNotifyOnlyWhenNoJobOfTheKindWasWaiting() throws Exception {
    try (Connection listener = db.dataSource().getConnection()) {
      listener.createStatement().execute("LISTEN " + JobQueue.ENQUEUED_CHANNEL);
      try {
        assertNotifications(listener.unwrap(PGConnection.class));
      } finally {
        // The connection goes back to the pool: it must not keep listening for the next test.
        listener.createStatement().execute("UNLISTEN *");
      }
    }
  }

  private void assertNotifications(PGConnection pg) throws Exception {
    queue.enqueue("zip", Map.of(), null, null, null);
    assertThat(notifications(pg)).containsExactly("zip");

    queue.enqueue("zip", Map.of(), null, null, null);
    EnqueueRequest zip = EnqueueRequest.of("zip", null, Map.of());
    queue.enqueue(List.of(zip, zip)); // JobInsertMany
    assertThat(notifications(pg)).as("zip jobs were already waiting").isEmpty();

    queue.enqueue("fork", Map.of(), null, null, null);
    assertThat(notifications(pg)).containsExactly("fork");

    db.update("UPDATE jobs SET status = 'running' WHERE kind = 'zip'");
    queue.enqueue(List.of(zip, zip));
    assertThat(notifications(pg)).as("one wake-up for the list").containsExactly("zip");
  }

  @Test
  void shouldReturnTheFirstJobForAnIdempotencyKeyReusedByTheSameOwner() {
    Enqueued first =
        queue.enqueueIdempotent("zip", Map.of("n", 1), "user", "alice", null, "order-42");
    Enqueued again =
        queue.enqueueIdempotent("zip", Map.of("n", 2), "user", "alice", null, "order-42");
    Enqueued otherOwner =
        queue.enqueueIdempotent("zip", Map.of("n", 3), "user", "bob", null, "order-42");

    assertThat(first.created()).isTrue();
    assertThat(again.created()).isFalse();
    assertThat(again.uid()).isEqualTo(first.uid());
    assertThat(otherOwner.created()).isTrue();
    assertThat(otherOwner.uid()).isNotEqualTo(first.uid());
    assertThat(queue.getJob(first.uid()).orElseThrow().payload).containsEntry("n", 1);
    assertThat(db.query("SELECT uid FROM jobs")).hasSize(2);
  }

  @Test
  void shouldRejectAnIdempotencyKeyWithoutAnOwnerOrOutOfShape() {
    assertThatThrownBy(() -> queue.enqueueIdempotent("zip", Map.of(), null, null, null, "k"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("owner");
    assertThatThrownBy(
            () -> queue.enqueueIdempotent("zip", Map.of(), "user", "a", null, "x".repeat(201)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("idempotency key");
    assertThat(db.query("SELECT uid FROM jobs")).isEmpty();
  }

  private static List<String> notifications(PGConnection pg) throws Exception {
    PGNotification[] received = pg.getNotifications(200);
    return received == null
        ? List.of()
        : Arrays.stream(received).map(PGNotification::getParameter).toList();
  }
}
