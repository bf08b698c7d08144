package io.asyncjobs.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.queue.JobClaims;
import io.asyncjobs.queue.JobOutcomes;
import io.asyncjobs.queue.JobRecovery;
import io.asyncjobs.queue.JobSweep;
import io.asyncjobs.settings.SettingsStore;
import io.asyncjobs.testing.Database;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Retention keeps pace: a sweep goes on batch after batch while expired jobs remain and its budget
 * lasts, says whether some remain, and reports how far behind retention is.
 */
@QuarkusTest
class SweeperTest {

  private static final Instant NOW = Instant.parse("2026-06-01T12:00:00Z");

  @Inject JobClaims claims;
  @Inject JobOutcomes outcomes;
  @Inject JobRecovery recovery;
  @Inject JobSweep sweep;
  @Inject SettingsStore settings;
  @Inject Database db;

  private final List<Duration> lags = new ArrayList<>();
  private final List<UUID> cleaned = new ArrayList<>();
  private boolean failing;
  private Throwable thrown;

  @BeforeEach
  void clear() {
    db.clearJobs();
    lags.clear();
    cleaned.clear();
    failing = false;
    thrown = null;
  }

  @Test
  void shouldSweepBatchAfterBatchUntilNoneIsLeftWithinItsBudget() {
    insertExpired(2_500, NOW.minus(Duration.ofHours(1)));
    insertExpired(10, NOW.plus(Duration.ofHours(1))); // not yet expired
    Tally tally = new Tally();

    boolean more = sweeper(1_000).sweep(NOW, tally, Duration.ofMinutes(1), () -> false);

    assertThat(more).isFalse();
    assertThat(tally.swept).isEqualTo(2_500);
    assertThat(cleaned).hasSize(2_500).doesNotHaveDuplicates();
    assertThat(count()).isEqualTo(10);
    assertThat(lags).containsExactly(Duration.ZERO);
  }

  @Test
  void shouldLeaveTheRestToTheNextRunOnceItsBudgetIsSpentAndSayHowFarBehindItIs() {
    insertExpired(250, NOW.minus(Duration.ofHours(3)));
    insertExpired(250, NOW.minus(Duration.ofHours(2)));
    Tally tally = new Tally();

    boolean more = sweeper(100).sweep(NOW, tally, Duration.ZERO, () -> false);

    assertThat(more).as("expired jobs remain").isTrue();
    assertThat(tally.swept).as("one job always, then the budget is spent").isEqualTo(1);
    assertThat(lags).containsExactly(Duration.ofHours(3));
    assertThat(count()).isEqualTo(499);
  }

  @Test
  void shouldStopWithinABatchWhenAClaimIsWaitingAndLeaveTheRestExpired() {
    insertExpired(500, NOW.minus(Duration.ofHours(1)));
    Tally tally = new Tally();

    boolean more =
        sweeper(100).sweep(NOW, tally, Duration.ofMinutes(1), () -> cleaned.size() >= 30);

    assertThat(more).as("expired jobs remain").isTrue();
    assertThat(tally.swept).as("the jobs cleaned before the claim came").isEqualTo(30);
    assertThat(count()).isEqualTo(470);
    assertThat(lags).containsExactly(Duration.ofHours(1));
  }

  @Test
  void shouldNotAskToGoOnAtOnceWhenEveryCleanupOfABatchFailed() {
    insertExpired(300, NOW.minus(Duration.ofHours(1)));
    failing = true;
    Tally tally = new Tally();

    boolean more = sweeper(100).sweep(NOW, tally, Duration.ofMinutes(1), () -> false);

    // A volume gone missing would otherwise keep a wake-up sweeping and failing back to back.
    assertThat(more).as("nothing was deleted: the next tick tries again").isFalse();
    assertThat(tally.swept).isZero();
    assertThat(tally.cleanupErrors).isEqualTo(100);
    assertThat(count()).isEqualTo(300);
    assertThat(
            ((Number)
                    db.query(
                            "SELECT count(*) AS n FROM jobs WHERE kind = 'sweepme' AND expires_at > ?",
                            ts(NOW))
                        .get(0)
                        .get("n"))
                .longValue())
        .as("deferred by the cleanup retry delay")
        .isEqualTo(100);
  }

  @Test
  void shouldKeepAJobWhoseCleanupThrewAnError() {
    insertExpired(5, NOW.minus(Duration.ofHours(1)));
    thrown = new NoClassDefFoundError("io/example/Gone");
    Tally tally = new Tally();

    sweeper(100).sweep(NOW, tally, Duration.ofMinutes(1), () -> false);

    assertThat(tally.cleanupErrors).isEqualTo(5);
    assertThat(count()).as("kept, not deleted, and the sweep did not die").isEqualTo(5);
  }

  private Sweeper sweeper(int batchSize) {
    EngineMetrics metrics =
        new EngineMetrics() {
          @Override
          public void retentionLag(String kind, Duration lag) {
            lags.add(lag);
          }
        };
    EngineContext context =
        new EngineContext(
            claims,
            outcomes,
            recovery,
            sweep,
            settings,
            () -> NOW,
            batchSize,
            Duration.ofMinutes(1),
            Duration.ofMinutes(5),
            false,
            0,
            0,
            metrics,
            JobTraces.OFF,
            Deliveries.NONE);
    return new Sweeper(
        "sweepme",
        context,
        job -> {
          if (thrown instanceof Error e) {
            throw e;
          }
          if (failing) {
            throw new java.io.IOException("volume gone");
          }
          cleaned.add(job.uid);
        });
  }

  private void insertExpired(int count, Instant expiresAt) {
    db.update(
        "INSERT INTO jobs (uid, kind, status, payload, created_at, completed_at, updated_at,"
            + " expires_at) SELECT gen_random_uuid(), 'sweepme', 'done', '{}', ?, ?, ?, ?"
            + " FROM generate_series(1, ?)",
        ts(NOW.minus(Duration.ofDays(8))),
        ts(NOW.minus(Duration.ofDays(8))),
        ts(NOW.minus(Duration.ofDays(8))),
        ts(expiresAt),
        count);
  }

  private long count() {
    return ((Number)
            db.query("SELECT count(*) AS n FROM jobs WHERE kind = 'sweepme'").get(0).get("n"))
        .longValue();
  }

  private static OffsetDateTime ts(Instant instant) {
    return OffsetDateTime.ofInstant(instant, ZoneOffset.UTC);
  }
}
