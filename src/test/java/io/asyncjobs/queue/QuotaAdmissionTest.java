package io.asyncjobs.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.asyncjobs.settings.SettingsOverride;
import io.asyncjobs.settings.SettingsStore;
import io.asyncjobs.testing.Database;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The owner's pending quota as {@link QuotaAdmission} answers it for every way in: the job that
 * goes over is refused with a retry-after from the kind's recent run times, and nothing of it is
 * added.
 */
@QuarkusTest
class QuotaAdmissionTest {

  /** A kind no service processes here, so that its pending jobs stay pending. */
  private static final String KIND = "quota_probe";

  private static final Owner ALICE = new Owner("user", "alice");

  @Inject JobQueue queue;
  @Inject Database db;
  @Inject SettingsStore settings;

  @BeforeEach
  void quota() {
    db.clearJobs();
    // No enqueue of this kind under an owner came before, so the quota is read fresh (it is kept a
    // second once read).
    settings.update(KIND, new SettingsOverride(null, 2, null, null, null, 1, null));
  }

  @AfterEach
  void noQuota() {
    settings.update(KIND, SettingsOverride.NONE);
  }

  @Test
  void shouldRefuseTheJobOverTheOwnersQuotaWithARetryAfterFromRecentRuns() {
    // Three done jobs of 4 s each: one job over a quota of a kind that runs two at once is 2 s.
    for (Enqueued done :
        queue.enqueue(
            List.of(
                EnqueueRequest.of(KIND, null, Map.of()),
                EnqueueRequest.of(KIND, null, Map.of()),
                EnqueueRequest.of(KIND, null, Map.of())))) {
      db.update(
          "UPDATE jobs SET status = 'done', duration_ms = 4000, completed_at = now() WHERE uid = ?",
          done.uid());
    }
    EnqueueRequest alices = EnqueueRequest.of(KIND, ALICE, Map.of());
    assertThat(queue.enqueue(alices).created()).isTrue();

    for (List<EnqueueRequest> over : List.of(List.of(alices), List.of(alices, alices))) {
      assertThatThrownBy(() -> queue.enqueue(over))
          .isInstanceOfSatisfying(
              QuotaExceededException.class,
              e -> {
                assertThat(e.limit()).isEqualTo(1);
                assertThat(e.pending()).isEqualTo(1 + over.size());
                assertThat(e.retryAfter()).isEqualTo(Duration.ofSeconds(over.size() * 2L));
              });
    }
    assertThat(queue.enqueue(alices.withQuotaExempt(true)).created()).as("an admin").isTrue();
    assertThat(db.query("SELECT uid FROM jobs WHERE owner_id = 'alice' AND status = 'pending'"))
        .hasSize(2);
  }
}
