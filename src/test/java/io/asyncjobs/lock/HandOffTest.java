package io.asyncjobs.lock;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.channels.Notifier;
import io.asyncjobs.testing.Database;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/** The lock's hand-off: a releasing owner tells the others, and a replica told tries at once. */
@QuarkusTest
class HandOffTest {

  @Inject Notifier notifier;
  @Inject Database db;

  @Test
  void shouldAnnounceTheReleaseOnlyWhenThisReplicaWasTheOwner() throws Exception {
    RecordingLock lock = new RecordingLock();
    OwnerLocks locks = OwnerLocks.of(lock);
    locks.primary();
    HandOff handOff = new HandOff(locks, notifier);
    try (Connection listener = db.dataSource().getConnection()) {
      try (Statement s = listener.createStatement()) {
        s.execute("LISTEN " + OwnerLock.RELEASED_CHANNEL);
      }
      try {
        handOff.releaseAll(false);
        assertThat(lock.released.get()).isEqualTo(1);
        assertThat(notifications(listener, 300)).as("not the owner: nothing to announce").isEmpty();

        handOff.releaseAll(true);
        assertThat(lock.released.get()).isEqualTo(2);
        assertThat(notifications(listener, 5_000))
            .as("the owner's release, announced with its identity")
            .containsExactly(RecordingLock.IDENTITY);
      } finally {
        try (Statement s = listener.createStatement()) {
          s.execute("UNLISTEN *");
        }
      }
    }
  }

  @Test
  void shouldTryForEveryLockAtOnceWhenAnotherReplicaAnnouncesItsRelease() {
    RecordingLock all = new RecordingLock();
    RecordingLock zip = new RecordingLock();
    OwnerLocks locks = new OwnerLocks(RecordingLock.IDENTITY, key -> key.equals("zip") ? zip : all);
    locks.primary();
    locks.forShard("zip");
    HandOff handOff = new HandOff(locks, notifier);
    assertThat(handOff.channel()).isEqualTo(OwnerLock.RELEASED_CHANNEL);

    handOff.notified("replica-b");

    assertThat(all.attempts.get()).isEqualTo(1);
    assertThat(zip.attempts.get()).as("a released shard may be any of them").isEqualTo(1);
    assertThat(all.released.get() + zip.released.get()).isZero();
  }

  /** The payloads on the listened channels within {@code millis} (stops at the first batch). */
  private static List<String> notifications(Connection c, int millis) throws Exception {
    List<String> payloads = new ArrayList<>();
    long until = System.nanoTime() + millis * 1_000_000L;
    PGConnection pg = c.unwrap(PGConnection.class);
    while (payloads.isEmpty() && System.nanoTime() < until) {
      PGNotification[] got = pg.getNotifications(100);
      if (got != null) {
        for (PGNotification n : got) {
          payloads.add(n.getParameter());
        }
      }
    }
    return payloads;
  }

  /** Counts releases and attempts; owns nothing. */
  private static final class RecordingLock implements OwnerLock {
    static final String IDENTITY = "hand-off-test-replica";
    final AtomicInteger released = new AtomicInteger();
    final AtomicInteger attempts = new AtomicInteger();

    @Override
    public Trust trust() {
      return Trust.NONE;
    }

    @Override
    public long epoch() {
      return 0;
    }

    @Override
    public boolean earlierHoldersSettled() {
      return false;
    }

    @Override
    public void superseded(long epoch) {}

    @Override
    public String name() {
      return "hand-off-test";
    }

    @Override
    public String identity() {
      return IDENTITY;
    }

    @Override
    public OwnerStatus status() {
      return null;
    }

    @Override
    public void release() {
      released.incrementAndGet();
    }

    @Override
    public void attemptSoon() {
      attempts.incrementAndGet();
    }
  }
}
