package io.asyncjobs.queue;

import static org.assertj.core.api.Assertions.assertThat;

import io.agroal.api.AgroalDataSource;
import io.asyncjobs.config.Shards;
import io.asyncjobs.lock.Epochs;
import io.asyncjobs.testing.Database;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every form of the claim starts nothing once a newer epoch of its lock was taken: the rows it
 * locked reach the update (by address, V27) only when the fence lets the claim in. Under the newest
 * epoch the same claim starts its room's worth, stamped with that epoch.
 */
@QuarkusTest
class ClaimFenceTest {

  private static final String KIND = "claim_fence_test";
  private static final String LOCK = "claim-fence-test";

  @Inject AgroalDataSource dataSource;
  @Inject JobQueue queue;
  @Inject Database db;

  @BeforeEach
  void setUp() {
    // One at a time, so that the owners take turns in the claim's order too.
    for (int i = 0; i < 40; i++) {
      queue.enqueue(
          List.of(EnqueueRequest.of(KIND, new Owner("user", "owner-" + i % 4), Map.of("i", i))));
    }
  }

  @AfterEach
  void tearDown() {
    db.update("DELETE FROM jobs WHERE kind = ?", KIND);
  }

  @ParameterizedTest
  @ValueSource(strings = {"many", "capped", "fair", "complete-and-claim"})
  void shouldStartNothingUnderAnEpochANewerOneReplaced(String form) throws Exception {
    JobClaims claims = new JobClaims(dataSource);
    long stale = Epochs.take(dataSource, LOCK, "stale");
    long newest = Epochs.take(dataSource, LOCK, "newest");

    JobClaims.Claimed refused = claim(claims, form, stale);

    assertThat(refused.fenced()).isTrue();
    assertThat(refused.jobs()).isEmpty();
    assertThat(countOf("running")).as("jobs started under the stale epoch").isZero();

    JobClaims.Claimed taken = claim(claims, form, newest);

    assertThat(taken.fenced()).isFalse();
    assertThat(taken.jobs()).hasSize(8);
    assertThat(taken.jobs()).allSatisfy(j -> assertThat(j.epoch).isEqualTo(newest));
    assertThat(countOf("running")).isEqualTo(8);
    assertThat(countOf("pending")).isEqualTo(32);
  }

  private static JobClaims.Claimed claim(JobClaims claims, String form, long epoch) {
    Instant now = Instant.now();
    JobClaims.ClaimRequest request =
        new JobClaims.ClaimRequest(KIND, Shards.ALL, 8, epoch, now, null);
    return switch (form) {
      case "many" -> claims.claimMany(request);
      case "capped" -> claims.claimCapped(request, 2);
      case "fair" ->
          claims.claimFair(new JobClaims.FairClaimRequest(KIND, Shards.ALL, 8, epoch, now, "", 0));
      default -> {
        JobClaims.CompleteAndClaim both =
            claims.completeAndClaimMany(List.of(), Duration.ofDays(1), request);
        yield new JobClaims.Claimed(both.fenced(), both.claimed());
      }
    };
  }

  private long countOf(String status) {
    return ((Number)
            db.query("SELECT count(*) AS n FROM jobs WHERE kind = ? AND status = ?", KIND, status)
                .get(0)
                .get("n"))
        .longValue();
  }
}
