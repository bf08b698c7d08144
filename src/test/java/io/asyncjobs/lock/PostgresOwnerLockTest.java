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

  @Test
  void shouldTakeAFreeLockOnlyWhileItCompetes() throws Exception {
    PostgresOwnerLock a = paused("a");

    Thread.sleep(300); // several retry periods
    assertThat(a.isOwner()).as("not competing: the free lock stays free").isFalse();

    a.compete(true);
    awaitTrue(a::isOwner, Duration.ofSeconds(2));
  }

  @Test
  void shouldGiveTheLockUpForAnotherReplicaAndNotTakeItBack() throws Exception {
    PostgresOwnerLock a = candidate("a", Duration.ofMillis(50));
    PostgresOwnerLock b = candidate("b", Duration.ofMillis(50));
    long first = a.epoch();

    a.compete(false);
    a.relinquish();

    assertThat(a.trust()).isEqualTo(Trust.NONE);
    awaitTrue(b::isOwner, Duration.ofSeconds(2));
    assertThat(b.epoch()).isGreaterThan(first);
    b.compete(false);
    b.relinquish();
    Thread.sleep(300);
    assertThat(a.isOwner() || b.isOwner()).as("neither competes: nobody takes it").isFalse();
    assertThat(a.status().competing()).as("attempts go on, for the health check").isTrue();
  }

  @Test
  void shouldListEveryReplicaWithALockSessionAsAMember() throws Exception {
    PostgresOwnerLock a = paused("replica-a");
    PostgresOwnerLock b = paused("replica-b");
    PostgresMembers seenByA = new PostgresMembers(db.dataSource(), name, "replica-a");
    awaitTrue(() -> live(seenByA).size() == 2, Duration.ofSeconds(5));
    assertThat(live(seenByA))
        .containsExactlyInAnyOrder(
            seenByA.self(), PostgresMembers.applicationName(name, "replica-b"));
    assertThat(new PostgresMembers(db.dataSource(), name + "-other", "x").live())
        .as("another deployment's locks are not its members")
        .containsExactly(PostgresMembers.applicationName(name + "-other", "x"));

    b.release();
    awaitTrue(() -> live(seenByA).size() == 1, Duration.ofSeconds(5));
    assertThat(a.isOwner()).isFalse();
  }

  @Test
  void shouldKeepALongIdentityWithinPostgresLimitAndDistinct() {
    String longA = "async-jobs-" + "x".repeat(60) + "-a";
    String longB = "async-jobs-" + "x".repeat(60) + "-b";
    assertThat(PostgresMembers.applicationName(name, longA)).hasSizeLessThanOrEqualTo(63);
    assertThat(PostgresMembers.applicationName(name, longA))
        .isNotEqualTo(PostgresMembers.applicationName(name, longB));
  }

  private static java.util.Set<String> live(PostgresMembers members) {
    try {
      return members.live();
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A candidate that does not compete until told to. */
  private PostgresOwnerLock paused(String identity) {
    PostgresOwnerLock lock = unstarted(identity, Duration.ofMillis(50));
    lock.compete(false);
    lock.start();
    return lock;
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
    PostgresOwnerLock lock = unstarted(identity, retryPeriod);
    lock.start();
    return lock;
  }

  private PostgresOwnerLock unstarted(String identity, Duration retryPeriod) {
    return track(
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
