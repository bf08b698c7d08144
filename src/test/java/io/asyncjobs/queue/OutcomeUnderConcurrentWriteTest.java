package io.asyncjobs.queue;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.lock.OwnerLock;
import io.asyncjobs.testing.Database;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An outcome lands on its row even when another write (a cancel request, progress) changed the row
 * while the outcome waited for it: the update finds the row by key and checks it again as it now
 * is. An update that found its rows by address alone would pass over the moved row, count the
 * outcome as another owner's, and leave the job running with no task, for the owner to put back and
 * run again.
 */
@QuarkusTest
class OutcomeUnderConcurrentWriteTest {

  private static final String KIND = "outcome_race_test";

  @Inject JobOutcomes outcomes;
  @Inject OwnerLock lock;
  @Inject Database db;

  @AfterEach
  void tearDown() {
    db.update("DELETE FROM jobs WHERE kind = ?", KIND);
  }

  @Test
  void shouldWriteAnOutcomeWhoseRowAnotherWriteChangedWhileItWaited() throws Exception {
    long epoch = lock.epoch();
    UUID uid = JobIds.next();
    db.update(
        "INSERT INTO jobs (uid, kind, status, owner_kind, owner_id, payload, created_at,"
            + " updated_at, expires_at, epoch, started_at) VALUES (?, ?, 'running', 'user', 'bob',"
            + " '{}', now(), now(), now() + interval '1 day', ?, now())",
        uid,
        KIND,
        epoch);
    Instant now = Instant.now();
    CompletableFuture<Map<UUID, JobStatus>> written;
    try (Connection other = db.dataSource().getConnection()) {
      other.setAutoCommit(false);
      try (PreparedStatement ps =
          other.prepareStatement("UPDATE jobs SET cancel_requested = true WHERE uid = ?")) {
        ps.setObject(1, uid);
        ps.executeUpdate();
      }
      written =
          CompletableFuture.supplyAsync(
              () ->
                  outcomes.completeMany(
                      List.of(Completion.done(uid, Map.of("ok", true), now, now.plusMillis(5))),
                      epoch,
                      Duration.ofDays(1)));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (db.query(
              "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                  + " AND query LIKE '%jobs_complete_many%'")
          .isEmpty()) {
        assertThat(System.nanoTime()).as("the outcome waits for the row").isLessThan(deadline);
        Thread.sleep(10);
      }
      other.commit();
    }

    assertThat(written.get(10, TimeUnit.SECONDS)).containsExactly(Map.entry(uid, JobStatus.DONE));
    assertThat(db.query("SELECT status, cancel_requested FROM jobs WHERE uid = ?", uid))
        .containsExactly(Map.of("status", "done", "cancel_requested", true));
  }
}
