package io.asyncjobs.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.TestClock;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

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
}
