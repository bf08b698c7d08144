package io.asyncjobs.queue;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.kinds.noop.NoopService;
import io.asyncjobs.testing.Database;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The totals of finished jobs that the triggers on {@code jobs} keep (migration V9) agree with the
 * table itself after every kind of write: outcomes, a retry of a failed job, a touch, deletes, a
 * truncate, and rows inserted finished, folded into the totals once per transaction (V31).
 */
@QuarkusTest
class JobTotalsTest {

  @Inject Database db;
  @Inject JobQueue queue;
  @Inject NoopService noop;

  @BeforeEach
  void clear() {
    db.clearJobs();
  }

  @Test
  void shouldCountWhatTheEngineFinishesAndWhatIsRetriedTouchedAndDeleted() throws Exception {
    UUID done = queue.enqueue("noop", Map.of("artifact_bytes", 10), null, null, null);
    queue.enqueue("noop", Map.of(), null, null, null);
    UUID failed = queue.enqueue("noop", Map.of("fail", true), null, null, null);
    assertThat(totals()).as("pending jobs are not counted").isEmpty();
    noop.runOnce();
    assertThat(noop.awaitTasks(Duration.ofSeconds(5))).isTrue();
    noop.runOnce();
    assertAgreesWithTheTable();
    assertThat(totals()).containsEntry("noop/done", List.of(2L, 10L, 2L, 0L));
    assertThat(finishedInMinutes()).isEqualTo(3);

    db.update("UPDATE jobs SET last_accessed_at = now() WHERE uid = ?", done);
    assertAgreesWithTheTable();
    db.update(
        "UPDATE jobs SET status = 'pending', error = NULL, completed_at = NULL WHERE uid = ?",
        failed);
    assertAgreesWithTheTable();
    assertThat(totals()).doesNotContainKey("noop/failed");
    db.update("DELETE FROM jobs WHERE uid = ?", done);
    assertAgreesWithTheTable();
    // V26 returns early from a statement that wrote no finished job: one that touches only
    // pending rows changes nothing, and one that deletes pending rows with a done one still
    // counts the done one.
    db.update("UPDATE jobs SET updated_at = now() WHERE status = 'pending'");
    assertAgreesWithTheTable();
    db.update("DELETE FROM jobs");
    assertAgreesWithTheTable();
    assertThat(totals()).as("the last done job, deleted with the pending ones").isEmpty();
    assertThat(finishedInMinutes())
        .as("finishing is an event: a delete does not undo it")
        .isEqualTo(3);
  }

  @Test
  void shouldCountRowsInsertedFinishedAndForgetEverythingOnTruncate() {
    db.update(
        "INSERT INTO jobs (uid, kind, status, payload, created_at, completed_at, updated_at,"
            + " expires_at, bytes_in, bytes_out, item_count)"
            + " SELECT gen_random_uuid(), (ARRAY['zip', 'fork'])[1 + i % 2],"
            + " (ARRAY['done', 'failed', 'pending'])[1 + i % 3], '{}', now(),"
            + " CASE WHEN i % 3 < 2 THEN now() END, now(), now() + interval '1 day', i, 2 * i, 1"
            + " FROM generate_series(1, 3000) AS i");
    assertAgreesWithTheTable();
    assertThat(finishedInMinutes()).isEqualTo(2000);
    db.update("UPDATE jobs SET status = 'failed' WHERE status = 'done' AND kind = 'zip'");
    assertAgreesWithTheTable();

    db.update("TRUNCATE jobs");
    assertThat(totals()).isEmpty();
    assertThat(finishedInMinutes()).isZero();
  }

  /**
   * A pending insert, as every enqueue is, calls no totals function: V9's statement trigger called
   * one for each, which found nothing finished and returned (V31).
   */
  @Test
  void shouldCallNoTotalsFunctionForAPendingInsert() throws Exception {
    try (Connection c = db.newSession()) {
      try (Statement st = c.createStatement()) {
        st.execute("SET track_functions = 'pl'");
      }
      c.setAutoCommit(false);
      try (Statement st = c.createStatement()) {
        st.executeUpdate(
            "INSERT INTO jobs (uid, kind, status, payload, created_at, updated_at, expires_at)"
                + " VALUES (gen_random_uuid(), 'noop', 'pending', '{}', now(), now(),"
                + " now() + interval '1 day')");
        for (String function :
            List.of(
                "jobs_keep_totals", "jobs_stage_inserted_finished", "job_totals_fold_inserted")) {
          assertThat(functionCalls(st, function)).as(function).isZero();
        }
      } finally {
        c.rollback();
      }
    }
  }

  /**
   * A statement that inserts many finished jobs writes the totals once, not once per job, and reads
   * the staging table once, not once per job; either per job made such an insert take time that
   * grew with the square of its rows. V29 upserted the totals row for each job, each upsert walking
   * every version of that row its transaction had written. V31 looked each staged row up at its
   * event, through a plan the session kept: after a few single rows folded in the same session it
   * read the whole staging table each time (a test fill of 300,000 jobs ran for more than twenty
   * minutes). The fold runs at commit; made immediate here, it runs at the statement's end instead,
   * in the transaction whose writes it counts.
   */
  @Test
  void shouldFoldAStatementOfManyFinishedJobsIntoTheTotalsOnce() throws Exception {
    try (Connection c = db.newSession()) {
      try (Statement st = c.createStatement()) {
        // Single rows first, each folded at its own commit, as a session of the app might.
        for (int i = 0; i < 8; i++) {
          st.executeUpdate(finishedJobs("noop", 1));
        }
      }
      c.setAutoCommit(false);
      try (Statement st = c.createStatement()) {
        // The session's counters hold what it has not yet reported (its earlier transactions too):
        // what this transaction did is the difference.
        long[] before = writesAndReads(st);
        st.executeUpdate(finishedJobs("noop", 2000));
        // Fires the fold's deferred events now, as the commit would.
        st.execute("SET CONSTRAINTS job_totals_fold IMMEDIATE");
        long[] after = writesAndReads(st);
        assertThat(after[0] - before[0]).as("rows written to job_totals").isEqualTo(1);
        assertThat(after[1] - before[1]).as("reads of the staging table").isEqualTo(1);
        try (ResultSet rs =
            st.executeQuery(
                "SELECT (SELECT jobs FROM job_totals WHERE kind = 'noop' AND status = 'done'),"
                    + " (SELECT count(*) FROM job_totals_inserted)")) {
          rs.next();
          assertThat(rs.getLong(1)).as("done jobs counted").isEqualTo(2008);
          assertThat(rs.getLong(2)).as("rows still staged").isZero();
        }
      } finally {
        c.rollback();
      }
    }
  }

  /**
   * Finished jobs inserted, then deleted or set back to pending in the same transaction, count as
   * they stand when it commits; a transaction rolled back counts nothing.
   */
  @Test
  void shouldCountWhatATransactionLeavesWhenItCommits() throws Exception {
    String insert =
        "INSERT INTO jobs (uid, kind, status, payload, created_at, completed_at, updated_at,"
            + " expires_at, bytes_in) SELECT gen_random_uuid(), 'fork', 'done', '{}', now(), now(),"
            + " now(), now() + interval '1 day', i FROM generate_series(1, 10) AS i";
    try (Connection c = db.newSession()) {
      c.setAutoCommit(false);
      try (Statement st = c.createStatement()) {
        st.executeUpdate(insert);
        c.rollback();
        st.executeUpdate(insert);
        st.executeUpdate("DELETE FROM jobs WHERE kind = 'fork' AND bytes_in <= 3");
        st.executeUpdate(
            "UPDATE jobs SET status = 'pending', completed_at = NULL"
                + " WHERE kind = 'fork' AND bytes_in IN (4, 5)");
        c.commit();
      }
    }
    assertAgreesWithTheTable();
    assertThat(totals()).containsEntry("fork/done", List.of(5L, 0L, 0L, 40L));
    assertThat(db.query("SELECT id FROM job_totals_inserted")).isEmpty();
  }

  /**
   * Finished jobs inserted and then truncated in one transaction leave no totals behind: V31 left
   * them staged, and the commit counted jobs that no longer existed (V32).
   */
  @Test
  void shouldForgetFinishedJobsInsertedBeforeATruncateInTheSameTransaction() throws Exception {
    try (Connection c = db.newSession()) {
      c.setAutoCommit(false);
      try (Statement st = c.createStatement()) {
        st.executeUpdate(finishedJobs("zip", 5));
        st.execute("TRUNCATE jobs");
        c.commit();
      }
    }
    assertThat(totals()).isEmpty();
    assertThat(finishedInMinutes()).isZero();
  }

  /**
   * A fold committing while another transaction finishes a job of the same kind in the same minute
   * waits for it and both commit. V31's fold locked the minute's row before the totals row, the
   * other way round from a completion's trigger, so the two deadlocked (V32).
   */
  @Test
  void shouldFoldBesideACompletionOfTheSameKindAndMinuteWithoutADeadlock() throws Exception {
    String minute = "timestamptz '2026-01-01 10:00:30+00'";
    String finished = finishedJobs("fork", 1, minute);
    db.update(finished); // the totals row both transactions will write
    UUID running = UUID.randomUUID();
    db.update(
        "INSERT INTO jobs (uid, kind, status, payload, created_at, started_at, updated_at,"
            + " expires_at) VALUES (?, 'fork', 'running', '{}', now(), now(), now(),"
            + " now() + interval '1 day')",
        running);
    try (Connection folding = db.newSession();
        Connection completing = db.newSession()) {
      folding.setAutoCommit(false);
      completing.setAutoCommit(false);
      try (Statement f = folding.createStatement();
          Statement c = completing.createStatement()) {
        f.executeUpdate(finished);
        long foldingPid = pid(f);
        // The completion has the totals row; the fold, committing, waits for it.
        c.executeQuery(
                "SELECT 1 FROM job_totals WHERE kind = 'fork' AND status = 'done' FOR UPDATE")
            .close();
        CompletableFuture<Void> commit =
            CompletableFuture.runAsync(
                () -> {
                  try {
                    folding.commit();
                  } catch (SQLException e) {
                    throw new IllegalStateException(e);
                  }
                });
        awaitWaitingForALock(foldingPid);
        try (PreparedStatement done =
            completing.prepareStatement(
                "UPDATE jobs SET status = 'done', completed_at = " + minute + " WHERE uid = ?")) {
          done.setObject(1, running);
          done.executeUpdate();
        }
        completing.commit();
        commit.get(30, TimeUnit.SECONDS);
      }
    }
    assertAgreesWithTheTable();
    assertThat(totals()).containsEntry("fork/done", List.of(3L, 0L, 0L, 0L));
  }

  private static long pid(Statement st) throws SQLException {
    try (ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private void awaitWaitingForALock(long pid) throws InterruptedException {
    for (int i = 0; i < 500; i++) {
      if (!db.query(
              "SELECT 1 FROM pg_stat_activity WHERE pid = ? AND wait_event_type = 'Lock'", pid)
          .isEmpty()) {
        return;
      }
      Thread.sleep(10);
    }
    throw new AssertionError("session " + pid + " never waited for a lock");
  }

  /** Inserts {@code count} jobs of {@code kind} that finished now, done. */
  private static String finishedJobs(String kind, int count) {
    return finishedJobs(kind, count, "now()");
  }

  /** Inserts {@code count} done jobs of {@code kind} that finished at {@code completedAt} (SQL). */
  private static String finishedJobs(String kind, int count, String completedAt) {
    return "INSERT INTO jobs (uid, kind, status, payload, created_at, completed_at, updated_at,"
        + " expires_at) SELECT gen_random_uuid(), '"
        + kind
        + "', 'done', '{}', now(), "
        + completedAt
        + ", now(), now() + interval '1 day'"
        + " FROM generate_series(1, "
        + count
        + ")";
  }

  /**
   * Rows this session wrote to job_totals, and reads it made of job_totals_inserted, counted but
   * not yet reported.
   */
  private static long[] writesAndReads(Statement st) throws SQLException {
    try (ResultSet rs =
        st.executeQuery(
            "SELECT pg_stat_get_xact_tuples_inserted('job_totals'::regclass)"
                + " + pg_stat_get_xact_tuples_updated('job_totals'::regclass),"
                + " pg_stat_get_xact_numscans('job_totals_inserted'::regclass)"
                + " + pg_stat_get_xact_numscans('job_totals_inserted_pkey'::regclass)")) {
      rs.next();
      return new long[] {rs.getLong(1), rs.getLong(2)};
    }
  }

  /** Calls in this transaction of the function {@code name}. */
  private static long functionCalls(Statement st, String name) throws SQLException {
    try (ResultSet rs =
        st.executeQuery(
            "SELECT coalesce(pg_stat_get_xact_function_calls('" + name + "'::regproc), 0)")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private void assertAgreesWithTheTable() {
    Map<String, List<Long>> fromTable = new java.util.TreeMap<>();
    for (Map<String, Object> row :
        db.query(
            "SELECT kind, status, count(*) AS n, coalesce(sum(bytes_in), 0) AS b_in,"
                + " coalesce(sum(bytes_out), 0) AS b_out FROM jobs"
                + " WHERE status IN ('done', 'failed') GROUP BY kind, status")) {
      fromTable.put(
          row.get("kind") + "/" + row.get("status"),
          List.of(
              ((Number) row.get("n")).longValue(),
              ((Number) row.get("b_in")).longValue(),
              ((Number) row.get("b_out")).longValue()));
    }
    Map<String, List<Long>> kept = new java.util.TreeMap<>();
    totals()
        .forEach((key, value) -> kept.put(key, List.of(value.get(0), value.get(3), value.get(1))));
    assertThat(kept).isEqualTo(fromTable);
  }

  /** kind/status to [jobs, bytes_out, items, bytes_in], rows with no jobs left out. */
  private Map<String, List<Long>> totals() {
    Map<String, List<Long>> out = new java.util.TreeMap<>();
    for (Map<String, Object> row :
        db.query("SELECT kind, status, jobs, bytes_in, bytes_out, items FROM job_totals")) {
      long jobs = ((Number) row.get("jobs")).longValue();
      if (jobs != 0) {
        out.put(
            row.get("kind") + "/" + row.get("status"),
            List.of(
                jobs,
                ((Number) row.get("bytes_out")).longValue(),
                ((Number) row.get("items")).longValue(),
                ((Number) row.get("bytes_in")).longValue()));
      }
    }
    return out;
  }

  private long finishedInMinutes() {
    return ((Number)
            db.query("SELECT coalesce(sum(finished), 0) AS n FROM job_finished_minutes")
                .get(0)
                .get("n"))
        .longValue();
  }
}
