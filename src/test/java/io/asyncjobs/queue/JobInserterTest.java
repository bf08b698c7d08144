package io.asyncjobs.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.TestClock;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * The one way in for new jobs: a list of {@link EnqueueRequest}s, each carrying every option, added
 * by {@link JobInserter} whatever the route (single, idempotent, many, batch).
 */
@QuarkusTest
class JobInserterTest {

  private static final Instant T0 = Instant.parse("2026-03-01T10:00:00Z");
  private static final Owner ALICE = new Owner("user", "alice");
  private static final String TRACE = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

  @Inject JobQueue queue;
  @Inject TestClock clock;
  @Inject Database db;
  @Inject JobInserter inserter;
  @Inject MeterRegistry registry;

  private final ExecutorService pool = Executors.newCachedThreadPool();

  @BeforeEach
  void setUp() {
    db.clearJobs();
    clock.set(T0);
  }

  @AfterEach
  void tearDown() {
    pool.shutdownNow();
    clock.reset();
  }

  @Test
  void shouldStoreEveryOptionOfEachRequestOfAListInOrder() {
    EnqueueRequest plain = EnqueueRequest.of("zip", ALICE, Map.of("n", 1));
    EnqueueRequest full =
        EnqueueRequest.of("zip", ALICE, Map.of("n", 2))
            .withPreferredName("two.zip")
            .withPriority(5)
            .withRunAfter(T0.plusSeconds(60))
            .withCallbackUrl("http://127.0.0.1:9/done")
            .withTraceparent(TRACE)
            .withIdempotencyKey("order-2");

    List<Enqueued> added = queue.enqueue(List.of(plain, full));

    assertThat(added).extracting(Enqueued::created).containsExactly(true, true);
    assertThat(added).extracting(Enqueued::status).containsOnly(JobStatus.PENDING);
    Job second = queue.getJob(added.get(1).uid()).orElseThrow();
    assertThat(second.payload).containsEntry("n", 2);
    assertThat(second.preferredName).isEqualTo("two.zip");
    assertThat(second.priority).isEqualTo(5);
    assertThat(second.runAfter).isEqualTo(T0.plusSeconds(60));
    assertThat(second.delayedUntil).isEqualTo(T0.plusSeconds(60));
    assertThat(second.callbackUrl).isEqualTo("http://127.0.0.1:9/done");
    assertThat(second.traceparent).isEqualTo(TRACE);
    assertThat(db.query("SELECT idempotency_key AS k FROM jobs ORDER BY uid"))
        .extracting(r -> r.get("k"))
        .containsExactly(null, "order-2");
  }

  @Test
  void shouldReplayAKeyUsedBeforeForTheSameRequestWhetherAloneOrInAList() {
    EnqueueRequest keyed = EnqueueRequest.of("zip", ALICE, Map.of("n", 1)).withIdempotencyKey("k");
    Enqueued first = queue.enqueue(keyed);

    Enqueued alone = queue.enqueue(keyed);
    List<Enqueued> inList =
        queue.enqueue(List.of(EnqueueRequest.of("zip", ALICE, Map.of("n", 2)), keyed));

    assertThat(first.created()).isTrue();
    assertThat(alone).isEqualTo(new Enqueued(first.uid(), false, JobStatus.PENDING));
    assertThat(inList.get(0).created()).isTrue();
    assertThat(inList.get(1)).isEqualTo(new Enqueued(first.uid(), false, JobStatus.PENDING));
    assertThat(db.query("SELECT uid FROM jobs")).hasSize(2);
  }

  @Test
  void shouldRefuseAKeyUsedBeforeForAnotherRequestAndAddNothing() {
    Enqueued first =
        queue.enqueue(EnqueueRequest.of("zip", ALICE, Map.of("n", 1)).withIdempotencyKey("k"));

    assertThatThrownBy(
            () ->
                queue.enqueue(
                    List.of(
                        EnqueueRequest.of("zip", ALICE, Map.of("n", 3)),
                        EnqueueRequest.of("zip", ALICE, Map.of("n", 2)).withIdempotencyKey("k"))))
        .isInstanceOfSatisfying(
            KeyReusedException.class,
            e -> {
              assertThat(e.index()).isEqualTo(1);
              assertThat(e.firstUid()).isEqualTo(first.uid());
            });
    assertThat(db.query("SELECT uid FROM jobs")).hasSize(1);
  }

  @Test
  void shouldRefuseAListWhoseRequestsDifferInKindOwnerOrExemptionAndAddNothing() {
    EnqueueRequest alices = EnqueueRequest.of("zip", ALICE, Map.of());
    for (EnqueueRequest other :
        List.of(
            EnqueueRequest.of("fork", ALICE, Map.of()),
            EnqueueRequest.of("zip", new Owner("user", "bob"), Map.of()),
            EnqueueRequest.of("zip", null, Map.of()),
            alices.withQuotaExempt(true))) {
      assertThatThrownBy(() -> queue.enqueue(List.of(alices, other)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("share");
    }
    assertThat(db.query("SELECT uid FROM jobs")).isEmpty();
  }

  @Test
  void shouldShareOneCommitAmongSingleEnqueuesThatPileUpAndAnswerEachOnlyOnceItsRowIsCommitted()
      throws Exception {
    double commitsBefore = sharedCommits().count();
    double callersBefore = sharedCommits().totalAmount();
    List<Future<Visible>> callers;
    try (Connection blocker = db.dataSource().getConnection()) {
      holdInserts(blocker);
      callers = leadTwoAndPileUp(16);
      blocker.rollback();
    }

    List<Visible> answers = new ArrayList<>();
    for (Future<Visible> f : callers) {
      answers.add(f.get(30, TimeUnit.SECONDS));
    }
    assertThat(answers).extracting(Visible::committed).containsOnly(true);
    assertThat(count("SELECT count(DISTINCT uid) AS n FROM jobs")).isEqualTo(16);
    assertThat(count("SELECT count(DISTINCT payload->>'n') AS n FROM jobs")).isEqualTo(16);
    // The fourteen that waited went in together, in one commit (the two leaders each alone).
    assertThat(sharedCommits().count() - commitsBefore).isEqualTo(1);
    assertThat(sharedCommits().totalAmount() - callersBefore).isEqualTo(14);
  }

  @Test
  void shouldLoseNoJobAndAddNoneTwiceWhenTheSharedCommitsSessionIsTerminated() throws Exception {
    List<Future<Visible>> callers;
    try (Connection blocker = db.dataSource().getConnection()) {
      holdInserts(blocker);
      callers = leadTwoAndPileUp(8);
      // One leader's session dies: its caller is told so; the six behind take its flight, whose
      // one statement for six rows now waits on the lock too. Then that session dies as well.
      assertThat(terminateBackendsWaitingOnTheLock("INSERT INTO jobs AS j", 1)).isEqualTo(1);
      awaitBackendsWaitingOnTheLock(1, "unnest(");
      assertThat(terminateBackendsWaitingOnTheLock("unnest(", 1)).isEqualTo(1);
      // The six are tried one by one: the first of them waits on the lock beside the other leader.
      awaitBackendsWaitingOnTheLock(2, "INSERT INTO jobs AS j");
      blocker.rollback();
    }

    int succeeded = 0;
    int failed = 0;
    for (Future<Visible> f : callers) {
      try {
        assertThat(f.get(30, TimeUnit.SECONDS).committed()).isTrue();
        succeeded++;
      } catch (ExecutionException e) {
        assertThat(e.getCause()).hasMessageContaining("could not enqueue");
        failed++;
      }
    }
    assertThat(failed).as("the caller whose own session died").isEqualTo(1);
    assertThat(succeeded).isEqualTo(7);
    assertThat(count("SELECT count(*) AS n FROM jobs")).isEqualTo(7);
    assertThat(count("SELECT count(DISTINCT payload->>'n') AS n FROM jobs")).isEqualTo(7);
  }

  @Test
  void shouldInsertTheOtherJobsOfASharedCommitWhenTheDatabaseRefusesOne() {
    EnqueueRequest good = EnqueueRequest.of("zip", ALICE, Map.of("n", 1));
    // jsonb refuses a NUL character, so this statement fails inside the database.
    EnqueueRequest refused = EnqueueRequest.of("zip", ALICE, Map.of("n", "\u0000"));
    EnqueueRequest other = EnqueueRequest.of("noop", null, Map.of("n", 3));

    List<SharedCommit.Outcome<Enqueued>> outcomes =
        inserter.insertTogether(List.of(good, refused, other));

    assertThat(outcomes.get(0).error()).isNull();
    assertThat(outcomes.get(1).error()).hasMessageContaining("could not enqueue");
    assertThat(outcomes.get(2).error()).isNull();
    assertThat(db.query("SELECT uid FROM jobs ORDER BY kind"))
        .extracting(r -> r.get("uid"))
        .containsExactly(outcomes.get(2).value().uid(), outcomes.get(0).value().uid());
  }

  @Test
  void shouldInsertEachJobAloneWhenTheSharedCommitIsRefusedAtCommitTime() {
    // A deferred constraint trigger refuses one job only when its transaction commits: the shared
    // commit fails as a whole, its transaction is read back as aborted, and each job goes alone.
    db.update(
        "CREATE FUNCTION test_refuse_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
            + " IF NEW.payload ? 'refuse_at_commit' THEN RAISE EXCEPTION 'refused at commit';"
            + " END IF; RETURN NULL; END $$");
    db.update(
        "CREATE CONSTRAINT TRIGGER test_refuse_at_commit AFTER INSERT ON jobs DEFERRABLE"
            + " INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION test_refuse_at_commit()");
    try {
      EnqueueRequest good = EnqueueRequest.of("zip", ALICE, Map.of("n", 1));
      EnqueueRequest refused = EnqueueRequest.of("zip", ALICE, Map.of("refuse_at_commit", true));
      EnqueueRequest other = EnqueueRequest.of("zip", ALICE, Map.of("n", 3));

      List<SharedCommit.Outcome<Enqueued>> outcomes =
          inserter.insertTogether(List.of(good, refused, other));

      assertThat(outcomes.get(0).error()).isNull();
      assertThat(outcomes.get(1).error()).hasMessageContaining("could not enqueue 1 job(s)");
      assertThat(outcomes.get(2).error()).isNull();
      assertThat(db.query("SELECT uid FROM jobs ORDER BY uid"))
          .extracting(r -> r.get("uid"))
          .containsExactly(outcomes.get(0).value().uid(), outcomes.get(2).value().uid());
    } finally {
      db.update("DROP TRIGGER test_refuse_at_commit ON jobs");
      db.update("DROP FUNCTION test_refuse_at_commit()");
    }
  }

  @Test
  void shouldFailOnlyTheCallerWhosePayloadCannotBeEncoded() {
    EnqueueRequest good = EnqueueRequest.of("zip", ALICE, Map.of("n", 1));
    // Jackson has no serializer for a bare Object; the Java API lets a caller pass one.
    EnqueueRequest odd = EnqueueRequest.of("zip", ALICE, Map.of("n", new Object()));

    List<SharedCommit.Outcome<Enqueued>> outcomes = inserter.insertTogether(List.of(good, odd));

    assertThat(outcomes.get(0).error()).isNull();
    assertThat(outcomes.get(1).error()).isNotNull();
    assertThat(db.query("SELECT uid FROM jobs"))
        .extracting(r -> r.get("uid"))
        .containsExactly(outcomes.get(0).value().uid());
  }

  @Test
  void shouldStoreEachJobOfASharedCommitAsTheOneRowStatementStoresItAndWakeEachKind()
      throws Exception {
    EnqueueRequest alice =
        EnqueueRequest.of("zip", ALICE, Map.of("n", 1))
            .withPriority(3)
            .withPreferredName("one.zip")
            .withRunAfter(T0.plusSeconds(60))
            .withCallbackUrl("http://127.0.0.1:9/done");
    EnqueueRequest anonymous = EnqueueRequest.of("noop", null, Map.of("n", 2));
    EnqueueRequest aliceAgain =
        EnqueueRequest.of("zip", ALICE, Map.of("n", 3)).withTraceparent(TRACE);
    List<EnqueueRequest> requests = List.of(alice, anonymous, aliceAgain);

    List<SharedCommit.Outcome<Enqueued>> outcomes;
    List<String> wakeUps;
    try (Connection listener = db.dataSource().getConnection()) {
      listener.createStatement().execute("LISTEN " + JobQueue.ENQUEUED_CHANNEL);
      try {
        outcomes = inserter.insertTogether(requests);
        PGNotification[] received = listener.unwrap(PGConnection.class).getNotifications(2_000);
        wakeUps =
            received == null
                ? List.of()
                : Arrays.stream(received).map(PGNotification::getParameter).toList();
      } finally {
        // The connection goes back to the pool: it must not keep listening for the next test.
        listener.createStatement().execute("UNLISTEN *");
      }
    }
    // The same requests, each alone through the one-row statement, for comparison.
    List<Job> shared = new ArrayList<>();
    List<Job> single = new ArrayList<>();
    for (int i = 0; i < requests.size(); i++) {
      shared.add(queue.getJob(outcomes.get(i).get().uid()).orElseThrow());
      single.add(queue.getJob(queue.enqueue(requests.get(i)).uid()).orElseThrow());
    }

    assertThat(shared)
        .usingRecursiveFieldByFieldElementComparatorIgnoringFields("uid")
        .containsExactlyElementsOf(single);
    assertThat(shared).extracting(j -> j.kind).containsExactly("zip", "noop", "zip");
    assertThat(shared.get(0).priority).isEqualTo(3);
    assertThat(shared.get(0).delayedUntil).isEqualTo(T0.plusSeconds(60));
    assertThat(shared.get(2).traceparent).isEqualTo(TRACE);
    // Into an empty queue, one wake-up per kind and shard, as single enqueues would send; the zip
    // group holds a job above the default priority, so its wake-up asks for the head.
    assertThat(wakeUps).containsExactlyInAnyOrder("zip:head", "noop");
  }

  /** What a caller saw: whether its job was committed, read on another connection, on return. */
  record Visible(UUID uid, boolean committed) {}

  private Future<Visible> enqueueAndLook(int n) {
    return pool.submit(
        () -> {
          UUID uid = queue.enqueue(EnqueueRequest.of("zip", ALICE, Map.of("n", n))).uid();
          return new Visible(
              uid, !db.query("SELECT 1 AS one FROM jobs WHERE uid = ?", uid).isEmpty());
        });
  }

  /**
   * Starts {@code total} callers while inserts are held back: the first two lead a flush each and
   * wait on the table lock, the others pile up behind them, in order.
   */
  private List<Future<Visible>> leadTwoAndPileUp(int total) throws InterruptedException {
    List<Future<Visible>> callers = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      callers.add(enqueueAndLook(i));
    }
    awaitBackendsWaitingOnTheLock(2, "INSERT INTO jobs AS j");
    for (int i = 2; i < total; i++) {
      callers.add(enqueueAndLook(i));
      awaitWaitingForCommit(i - 1);
    }
    return callers;
  }

  /** Takes a lock on jobs that holds every insert back until {@code blocker} rolls back. */
  private static void holdInserts(Connection blocker) throws SQLException {
    blocker.setAutoCommit(false);
    try (Statement st = blocker.createStatement()) {
      st.execute("LOCK TABLE jobs IN SHARE MODE");
    }
  }

  private void awaitBackendsWaitingOnTheLock(int n, String statement) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (count(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                + " AND position(? IN query) > 0",
            statement)
        < n) {
      assertThat(System.nanoTime()).as("%d inserts waiting on the lock", n).isLessThan(deadline);
      Thread.sleep(5);
    }
  }

  private long terminateBackendsWaitingOnTheLock(String statement, int limit) {
    return count(
        "SELECT count(pg_terminate_backend(pid)) AS n FROM (SELECT pid FROM pg_stat_activity"
            + " WHERE wait_event_type = 'Lock' AND position(? IN query) > 0 LIMIT ?) w",
        statement,
        limit);
  }

  private void awaitWaitingForCommit(int n) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (inserter.waitingForCommit() < n) {
      assertThat(System.nanoTime()).as("%d callers waiting", n).isLessThan(deadline);
      Thread.sleep(1);
    }
  }

  private long count(String sql, Object... args) {
    return ((Number) db.query(sql, args).get(0).get("n")).longValue();
  }

  private DistributionSummary sharedCommits() {
    return registry.get("jobs.enqueue.shared.commit.callers").summary();
  }
}
