package io.asyncjobs.queue;

import static org.assertj.core.api.Assertions.assertThat;

import io.agroal.api.AgroalDataSource;
import io.asyncjobs.channels.Notifier;
import io.asyncjobs.config.Shards;
import io.asyncjobs.settings.SettingsStore;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.Listening;
import io.asyncjobs.time.Clock;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.enterprise.event.Event;
import jakarta.inject.Inject;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a single enqueue tells the shard's owner, as {@link LocalWakeUps} answers for this replica:
 * nothing through the database when the owner runs here, a notification when it may run elsewhere,
 * and one after the commit when the owner left this replica while the job went in.
 */
@QuarkusTest
class LocalWakeUpsTest {

  @Inject Database db;
  @Inject SettingsStore settings;
  @Inject Clock clock;
  @Inject AgroalDataSource dataSource;
  @Inject Event<JobsEnqueued> enqueued;
  @Inject Shards shards;
  @Inject QuotaAdmission quota;
  @Inject Notifier notifier;

  @BeforeEach
  void clear() {
    db.clearJobs();
  }

  @Test
  void shouldNotifyNobodyWhenTheOwnerRunsHere() throws Exception {
    List<String> received = enqueueOneListening((kind, shard) -> true, 0);

    assertThat(received).isEmpty();
    assertThat(db.query("SELECT uid FROM jobs WHERE kind = 'zip'")).hasSize(1);
  }

  @Test
  void shouldNotifyAnIdleOwnerElsewhere() throws Exception {
    assertThat(enqueueOneListening((kind, shard) -> false, 0)).containsExactly("zip");
  }

  @Test
  void shouldNotifyTheNewOwnerWhenTheShardLeftThisReplicaWhileTheJobWentIn() throws Exception {
    assertThat(enqueueOneListening(firstYesThenNo(), 0)).containsExactly("zip");
    // A job above the default priority asks its new owner to claim from the head.
    assertThat(enqueueOneListening(firstYesThenNo(), 5))
        .containsExactly("zip" + JobQueue.FROM_HEAD);
    assertThat(db.query("SELECT priority FROM jobs WHERE kind = 'zip'"))
        .containsExactly(Map.of("priority", 5));
  }

  /** Answers that the owner runs here when asked first, and that it does not from then on. */
  private static LocalWakeUps firstYesThenNo() {
    AtomicInteger asked = new AtomicInteger();
    return (kind, shard) -> asked.getAndIncrement() == 0;
  }

  /**
   * Enqueues one zip job of {@code priority} through an inserter whose replica answers as {@code
   * wakeUps} does, on a queue with no zip job waiting, and returns the notifications on the wake-up
   * channel meanwhile.
   */
  private List<String> enqueueOneListening(LocalWakeUps wakeUps, int priority) throws Exception {
    db.update("DELETE FROM jobs WHERE kind = 'zip' AND status = 'pending'");
    JobInserter inserter =
        new JobInserter(
            settings,
            clock,
            dataSource,
            enqueued,
            QueueMetrics.NONE,
            shards,
            quota,
            wakeUps,
            LocalStarts.NONE,
            notifier);
    try (Listening listener = new Listening(dataSource, JobQueue.ENQUEUED_CHANNEL)) {
      inserter.enqueue(
          List.of(
              EnqueueRequest.of("zip", new Owner("user", "alice"), Map.of())
                  .withPriority(priority)));
      return listener.received(500);
    }
  }
}
