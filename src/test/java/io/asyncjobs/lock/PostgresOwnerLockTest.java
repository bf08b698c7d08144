package io.asyncjobs.lock;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.TcpProxy;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Candidates for a lock of their own name, beside the application's lock, on the test database. */
@QuarkusTest
class PostgresOwnerLockTest {

  @Inject Database db;

  @ConfigProperty(name = "quarkus.datasource.jdbc.url")
  String url;

  private final String name = "test-" + UUID.randomUUID().toString().substring(0, 8);
  private final List<PostgresOwnerLock> candidates = new ArrayList<>();

  @AfterEach
  void releaseAll() {
    candidates.forEach(PostgresOwnerLock::release);
  }

  @Test
  void shouldLetExactlyOneOfTwoCandidatesOwn() {
    PostgresOwnerLock a = candidate("a", Duration.ofMillis(100));
    PostgresOwnerLock b = candidate("b", Duration.ofMillis(100));

    assertThat(a.isOwner()).isTrue();
    assertThat(b.isOwner()).isFalse();
    assertThat(a.status().since()).isNotNull();
    assertThat(b.status().owner()).isFalse();
  }

  @Test
  void shouldHandOverAtOnceWhenTheOwnerReleases() {
    PostgresOwnerLock a = candidate("a", Duration.ofHours(1));
    PostgresOwnerLock b = candidate("b", Duration.ofHours(1));
    long firstEpoch = a.epoch();

    a.release();
    b.attemptSoon();

    awaitTrue(b::isOwner, Duration.ofSeconds(2));
    assertThat(a.isOwner()).isFalse();
    assertThat(b.epoch()).isGreaterThan(firstEpoch);
  }

  @Test
  void shouldTakeItsLockBackAtANewEpochWhenItsSessionDiesAndNobodyElseTakesIt() {
    PostgresOwnerLock a = candidate("a", Duration.ofMillis(200));
    long firstEpoch = a.epoch();

    assertThat(killSessionOf(name)).isEqualTo(1);
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (a.epoch() == firstEpoch && System.nanoTime() < deadline) {
      assertThat(a.trust()).as("its running work may go on meanwhile").isNotEqualTo(Trust.NONE);
    }

    assertThat(a.epoch()).isGreaterThan(firstEpoch);
    awaitTrue(a::isOwner, Duration.ofSeconds(2));
  }

  @Test
  void shouldStopAtOnceWhenAnotherReplicaTookTheLockWhileItWasCutOff() throws Exception {
    URI server = URI.create(url.substring("jdbc:".length()));
    try (TcpProxy proxy = new TcpProxy(server.getPort())) {
      String throughProxy = url.replace(":" + server.getPort() + "/", ":" + proxy.port() + "/");
      PostgresOwnerLock a =
          track(
              new PostgresOwnerLock(
                  throughProxy,
                  "postgres",
                  "",
                  name,
                  "a",
                  Duration.ofSeconds(10),
                  Duration.ofMillis(200),
                  Duration.ofSeconds(1),
                  LockMetrics.none()));
      a.start();
      assertThat(a.isOwner()).isTrue();
      PostgresOwnerLock b = candidate("b", Duration.ofMillis(50));

      // The connection breaks; the server ends a's session and frees the lock, and b takes it
      // while a cannot reach the server.
      proxy.cut();
      awaitTrue(b::isOwner, Duration.ofSeconds(5));
      // Until a's next attempt it still believes it owns; the fence refuses its claims meanwhile.
      awaitTrue(() -> a.trust() == Trust.FINISH, Duration.ofSeconds(2));
      assertThat(b.earlierHoldersSettled())
          .as("b leaves a's running jobs alone for a's trust window")
          .isFalse();
      long restoredAt = System.nanoTime();
      proxy.restore();

      awaitTrue(() -> a.trust() == Trust.NONE, Duration.ofSeconds(3));
      assertThat(Duration.ofNanos(System.nanoTime() - restoredAt))
          .as("a stops as soon as it sees b holds the lock, well before its deadline")
          .isLessThan(Duration.ofSeconds(2));
    }
  }

  /** Terminates the session holding the advisory lock of {@code lockName}; returns how many. */
  private int killSessionOf(String lockName) {
    return db.query(
            "SELECT pg_terminate_backend(pid) AS t FROM pg_locks WHERE locktype = 'advisory'"
                + " AND granted AND objsubid = 1"
                + " AND ((classid::bigint << 32) | objid::bigint) = ?",
            PostgresOwnerLock.keyOf(lockName))
        .size();
  }

  @Test
  void shouldStopTrustingALeaseWhoseRenewalIsOverdue() {
    // Renewals every hour against a one-second deadline: the owner must fence itself.
    PostgresOwnerLock a =
        track(
            new PostgresOwnerLock(
                url,
                "postgres",
                "",
                name,
                "a",
                Duration.ofSeconds(1),
                Duration.ofHours(1),
                Duration.ofSeconds(1),
                LockMetrics.none()));
    a.start();
    assertThat(a.isOwner()).isTrue();

    awaitTrue(() -> !a.isOwner(), Duration.ofSeconds(3));
    assertThat(a.status().owner()).isFalse();
  }

  private PostgresOwnerLock candidate(String identity, Duration retryPeriod) {
    PostgresOwnerLock lock =
        track(
            new PostgresOwnerLock(
                url,
                "postgres",
                "",
                name,
                identity,
                Duration.ofSeconds(10),
                retryPeriod,
                Duration.ofSeconds(1),
                LockMetrics.none()));
    lock.start();
    return lock;
  }

  private PostgresOwnerLock track(PostgresOwnerLock lock) {
    candidates.add(lock);
    return lock;
  }

  /** Polls a condition that another thread makes true; fails past the deadline. */
  private static void awaitTrue(BooleanSupplier condition, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not met within " + timeout);
      }
      Thread.onSpinWait();
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }
}
