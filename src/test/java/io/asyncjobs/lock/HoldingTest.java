package io.asyncjobs.lock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** How far a holding is trusted as its confirmations age, on a clock the test moves. */
class HoldingTest {

  private static final Duration DEADLINE = Duration.ofSeconds(10);
  private static final Duration RETRY = Duration.ofSeconds(2);

  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
  private final Holding holding = new Holding("a", DEADLINE, RETRY, nanos::get, LockMetrics.none());

  @Test
  void shouldPauseClaimingWhileAConfirmationIsLateAndStopOnlyAtTheDeadline() {
    holding.begin(7, nanos.get(), "test", Duration.ZERO);
    assertThat(holding.trust()).isEqualTo(Trust.CLAIM);

    advance(Duration.ofMillis(3_900));
    assertThat(holding.trust()).as("within two retry periods").isEqualTo(Trust.CLAIM);
    advance(Duration.ofMillis(200));
    assertThat(holding.trust()).as("late: claim nothing, keep working").isEqualTo(Trust.FINISH);
    advance(Duration.ofMillis(5_800));
    assertThat(holding.trust()).isEqualTo(Trust.FINISH);
    advance(Duration.ofMillis(200));
    assertThat(holding.trust()).as("past the deadline").isEqualTo(Trust.NONE);
  }

  @Test
  void shouldCountATrustWindowFromWhenTheRenewalWasSentNotWhenItsAnswerCame() {
    holding.begin(7, nanos.get(), "test", Duration.ZERO);
    long sent = nanos.get() + Duration.ofSeconds(2).toNanos();
    advance(Duration.ofSeconds(9)); // the answer took seven seconds to come
    holding.confirmed(sent);

    advance(Duration.ofMillis(2_900));
    assertThat(holding.trust())
        .as("9.9 s after the renewal was sent, though only 2.9 s after its answer")
        .isEqualTo(Trust.FINISH);
    advance(Duration.ofMillis(200));
    assertThat(holding.trust()).isEqualTo(Trust.NONE);
  }

  @Test
  void shouldKeepRunningWorkWhileABrokenSessionIsTakenBack() {
    holding.begin(7, nanos.get(), "test", Duration.ZERO);
    advance(Duration.ofSeconds(1));
    holding.broken("connection reset");

    assertThat(holding.trust()).isEqualTo(Trust.FINISH);
    advance(Duration.ofSeconds(9));
    assertThat(holding.trust()).isEqualTo(Trust.NONE);
  }

  @Test
  void shouldStopAtOnceWhenTheLockIsKnownLostOrSuperseded() {
    holding.begin(7, nanos.get(), "test", Duration.ZERO);
    holding.lost("the Lease names b");
    assertThat(holding.trust()).isEqualTo(Trust.NONE);

    holding.begin(8, nanos.get(), "test", Duration.ZERO);
    holding.superseded(7);
    assertThat(holding.trust()).as("an older epoch's news changes nothing").isEqualTo(Trust.CLAIM);
    holding.superseded(8);
    assertThat(holding.trust()).isEqualTo(Trust.NONE);
  }

  @Test
  void shouldSayWhenEarlierHoldersHaveCertainlyStopped() {
    holding.begin(7, nanos.get(), "test", Duration.ofSeconds(12));
    advance(Duration.ofSeconds(11));
    holding.confirmed(nanos.get());
    assertThat(holding.earlierHoldersSettled()).isFalse();
    advance(Duration.ofSeconds(1));
    assertThat(holding.earlierHoldersSettled()).isTrue();
  }

  @Test
  void shouldNeverTrustBeforeTheFirstHolding() {
    assertThat(holding.trust()).isEqualTo(Trust.NONE);
    assertThat(holding.earlierHoldersSettled()).isFalse();
  }

  private void advance(Duration d) {
    nanos.addAndGet(d.toNanos());
  }
}
