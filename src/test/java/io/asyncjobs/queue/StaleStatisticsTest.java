package io.asyncjobs.queue;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.testing.Database;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The hot statements cost the same whatever the statistics of {@code jobs} say. A queue's
 * statistics usually say that no job waits: the last ANALYZE found it drained, or none has run
 * since the install. Each pooled session keeps the generic plan it made then until the next ANALYZE
 * (50,000 changes away), so a plan that reads every waiting job is paid on every call for as long
 * as a backlog lasts. Each test makes such statistics (5,000 finished jobs, none waiting), plans
 * the real statement, adds a backlog and counts the rows it reads, in one transaction that is
 * rolled back.
 */
@QuarkusTest
class StaleStatisticsTest {

  private static final Instant T0 = Instant.parse("2026-03-01T10:00:00Z");

  @Inject Database db;

  @BeforeEach
  void setUp() {
    db.clearJobs();
  }

  /**
   * The enqueue's check for an idle owner reads a row or two whatever the queue holds. Here 3,000
   * jobs of the same kind wait, and 3,000 of another. As a NOT EXISTS it was planned as a hashed
   * subplan that read every due job of every kind on each enqueue (6,003 rows before the fix). Both
   * probes are checked: the shard's, and the owner's under a running quota.
   */
  @Test
  void shouldProbeForAnIdleOwnerByReadingARowOrTwoWhateverTheBacklog() throws Exception {
    String start = "'" + T0 + "'";
    // uid, kind, owner, name, payload, times, retention, shard, priority, run after, delayed
    // until, callback, trace; then the running quota per owner.
    String one =
        "gen_random_uuid(), 'zip', 'user', 'alice', NULL, '{}', "
            + String.join(", ", start, start, start)
            + ", 'zip', 604800, 'all', 0, NULL, NULL, NULL, NULL, ";
    String many =
        "'zip', 'user', 'alice', "
            + String.join(", ", start, start, start)
            + ", 'zip', 604800, ARRAY[gen_random_uuid()], '{\"{}\"}',"
            + " '{NULL}', '{all}', '{0}', '{NULL}', '{NULL}', '{NULL}', '{NULL}', ";
    try (Connection c = db.dataSource().getConnection();
        Statement s = c.createStatement()) {
      c.setAutoCommit(false);
      try {
        staleStatistics(s);
        s.execute("SET LOCAL plan_cache_mode = force_generic_plan");
        s.execute("PREPARE one AS " + PreparedSql.numbered(JobInserter.JOB_INSERT_ONE));
        s.execute("PREPARE many AS " + PreparedSql.numbered(JobInserter.JOB_INSERT_MANY));
        // Plans both while no job waits, as a pooled session keeps them.
        s.execute("EXECUTE one(" + one + "0)");
        s.execute("EXECUTE many(" + many + "0)");
        s.execute(
            "INSERT INTO jobs (uid, kind, status, owner_kind, owner_id, payload, created_at,"
                + " updated_at, expires_at) SELECT gen_random_uuid(), CASE WHEN g % 2 = 0"
                + " THEN 'zip' ELSE 'fork' END, 'pending', 'user', 'bob', '{}', now(), now(),"
                + " now() FROM generate_series(1, 6000) g");

        for (int quota : new int[] {0, 1}) {
          assertThat(rowsReadBy(s, "EXECUTE one(" + one + quota + ")"))
              .as("JobInsertOne, running quota %d", quota)
              .isLessThanOrEqualTo(2);
          assertThat(rowsReadBy(s, "EXECUTE many(" + many + quota + ")"))
              .as("JobInsertMany, running quota %d", quota)
              .isLessThanOrEqualTo(2);
        }
      } finally {
        c.rollback();
        s.execute("DEALLOCATE ALL");
        c.setAutoCommit(true);
      }
    }
  }

  /**
   * A claim of 10 reads a few rows per job claimed, not the backlog of 10,000 that arrived after a
   * drained burst. The table is as a new install has it (never analysed, its indexes made empty),
   * so every pending index looks empty to the planner. The burst left its dead entries in the
   * due-claim index, while the per-owner index's equal keys are deduplicated into a few pages: the
   * claim's generic plan read the 10,000 through the per-owner index and sorted them, until it
   * walked the due-claim index in jobs_due_for_claim (V24).
   */
  @Test
  void shouldClaimTenJobsWithoutReadingTheBacklogAfterADrainedBurst() throws Exception {
    try (Connection c = db.dataSource().getConnection();
        Statement s = c.createStatement()) {
      c.setAutoCommit(false);
      try {
        s.execute("CREATE TEMPORARY TABLE jobs (LIKE public.jobs INCLUDING ALL) ON COMMIT DROP");
        String pending =
            "INSERT INTO jobs (uid, kind, status, owner_kind, owner_id, payload, created_at,"
                + " updated_at, expires_at) SELECT gen_random_uuid(), 'zip', 'pending', 'user',"
                + " 'bob', '{}', now(), now(), now() FROM generate_series(1, ";
        s.execute(pending + "20000)");
        s.execute("UPDATE jobs SET status = 'done'"); // the burst, drained
        s.execute(pending + "10000)");
        long epoch = newEpoch(s);
        s.execute("SET LOCAL plan_cache_mode = force_generic_plan");
        s.execute("PREPARE claim AS " + PreparedSql.numbered(JobClaims.JOB_CLAIM_MANY));

        // Epoch, kind, shard, the cursor before every job, room, time, epoch.
        long read =
            rowsReadBy(
                s,
                "EXECUTE claim("
                    + epoch
                    + ", 'zip', 'all', -32767, '00000000-0000-0000-0000-000000000000', 10, now(), "
                    + epoch
                    + ")");

        assertThat(firstValue(s, "SELECT count(*) FROM jobs WHERE status = 'running'"))
            .as("jobs claimed")
            .isEqualTo("10");
        // The burst's dead entries sit between the live ones here (random uids), two for each: the
        // walk steps over them until a vacuum removes them. The sorted read took over 10,000.
        assertThat(read).as("rows of jobs read").isLessThanOrEqualTo(100);
      } finally {
        c.rollback();
        s.execute("DEALLOCATE ALL");
        c.setAutoCommit(true);
      }
    }
  }

  /**
   * Each claim, and the outcomes written after it, find their rows by key, not by reading the
   * table, even under plans made while {@code jobs} was empty. A new database, or a {@code
   * TRUNCATE}, leaves the table without pages; a pooled session that plans its statements then
   * keeps those plans while the table grows, until autovacuum first analyses it. The claim's update
   * read the whole table with a sequential scan under such a plan (20,010 rows here, on every
   * claim, before V27). The 20,000 jobs waiting belong to 50 owners.
   */
  @ParameterizedTest
  @ValueSource(strings = {"many", "capped", "fair"})
  void shouldClaimAndCompleteByKeyUnderPlansMadeWhileTheTableWasEmpty(String claimKind)
      throws Exception {
    withEmptyJobsUnderGenericPlans(
        (s, epoch) -> {
          String kindAndShard = "'zip', 'all', ";
          String times = "now(), " + epoch + ")";
          // Each claim: the fence's epoch, its own parameters (room 10), the time and the epoch.
          String claim =
              switch (claimKind) {
                case "many" -> {
                  s.execute("PREPARE claim AS " + PreparedSql.numbered(JobClaims.JOB_CLAIM_MANY));
                  yield "EXECUTE claim("
                      + epoch
                      + ", "
                      + kindAndShard
                      + "-32767,"
                      + " '00000000-0000-0000-0000-000000000000', 10, "
                      + times;
                }
                case "capped" -> {
                  s.execute("PREPARE claim AS " + PreparedSql.numbered(JobClaims.JOB_CLAIM_CAPPED));
                  yield "EXECUTE claim(" + epoch + ", " + kindAndShard + "10, 5, " + times;
                }
                default -> {
                  s.execute("PREPARE claim AS " + PreparedSql.numbered(JobClaims.JOB_CLAIM_FAIR));
                  yield "EXECUTE claim(" + epoch + ", " + kindAndShard + "'', 10, 0, " + times;
                }
              };
          s.execute("PREPARE complete AS " + PreparedSql.numbered(JobOutcomes.COMPLETE));
          // Plans both while the table is empty, as a pooled session of a new install does.
          s.execute(claim);
          s.execute(completeAllDone("{}", 0, epoch));
          s.execute(
              "INSERT INTO jobs (uid, kind, status, owner_kind, owner_id, payload, created_at,"
                  + " updated_at, expires_at) SELECT gen_random_uuid(), 'zip', 'pending', 'user',"
                  + " 'bob' || (g % 50), '{}', now(), now(), now() FROM generate_series(1, 20000) g");

          assertThat(rowsReadBy(s, claim))
              .as("rows of jobs the claim read")
              .isLessThanOrEqualTo(100);
          String claimed =
              firstValue(s, "SELECT array_agg(uid)::text FROM jobs WHERE status = 'running'");
          assertThat(rowsReadBy(s, completeAllDone(claimed, 10, epoch)))
              .as("rows of jobs the outcomes read")
              .isLessThanOrEqualTo(100);
          assertThat(statusCounts(s)).isEqualTo("done=10 pending=19990");
        });
  }

  /**
   * The outcomes find their rows by key however many jobs run, under a plan made while the table
   * was empty. Joined to its outcomes in one statement, JobCompleteMany's plan read every running
   * row (and, in the shape a session kept during the peers suite's drains, scanned the outcomes
   * once per running row: 37-75 ms for 450 outcomes beside 500 running jobs); here 5,000 jobs run
   * and 450 of them finish.
   */
  @Test
  void shouldWriteManyOutcomesByKeyWhateverTheJobsRunningUnderAPlanMadeWhileTheTableWasEmpty()
      throws Exception {
    withEmptyJobsUnderGenericPlans(
        (s, epoch) -> {
          s.execute("PREPARE complete AS " + PreparedSql.numbered(JobOutcomes.COMPLETE));
          s.execute(completeAllDone("{}", 0, epoch)); // planned while the table is empty
          s.execute(
              "INSERT INTO jobs (uid, kind, status, owner_kind, owner_id, payload, created_at,"
                  + " updated_at, expires_at, epoch, started_at) SELECT gen_random_uuid(), 'zip',"
                  + " CASE WHEN g <= 5000 THEN 'running' ELSE 'pending' END, 'user', 'bob', '{}',"
                  + " now(), now(), now(), CASE WHEN g <= 5000 THEN "
                  + epoch
                  + " END, now() FROM generate_series(1, 15000) g");
          String finished =
              firstValue(
                  s,
                  "SELECT array_agg(uid)::text FROM (SELECT uid FROM jobs WHERE status = 'running'"
                      + " ORDER BY uid LIMIT 450) t");

          assertThat(rowsReadBy(s, completeAllDone(finished, 450, epoch)))
              .as("rows of jobs 450 outcomes read beside 5,000 running jobs")
              .isLessThanOrEqualTo(1_000);
          assertThat(statusCounts(s)).isEqualTo("done=450 pending=10000 running=4550");
        });
  }

  /** What a test does on its connection, in its transaction, given the epoch it took. */
  @FunctionalInterface
  private interface EmptyJobsBody {
    void run(Statement s, long epoch) throws Exception;
  }

  /**
   * Runs {@code body} in one transaction that is rolled back, on an empty temporary {@code jobs}
   * (which hides the real one from every statement and function of the session), with a new epoch
   * and every prepared statement planned generically, as a pooled session keeps it.
   */
  private void withEmptyJobsUnderGenericPlans(EmptyJobsBody body) throws Exception {
    try (Connection c = db.dataSource().getConnection();
        Statement s = c.createStatement()) {
      c.setAutoCommit(false);
      try {
        s.execute("CREATE TEMPORARY TABLE jobs (LIKE public.jobs INCLUDING ALL) ON COMMIT DROP");
        long epoch = newEpoch(s);
        s.execute("SET LOCAL plan_cache_mode = force_generic_plan");
        body.run(s, epoch);
      } finally {
        c.rollback();
        s.execute("DEALLOCATE ALL");
        c.setAutoCommit(true);
      }
    }
  }

  /**
   * The prepared JobCompleteMany ({@code complete}) for {@code count} jobs, all done: the
   * retention, then one array per column of the outcomes ({@code uids} a uuid[] literal), then the
   * epoch.
   */
  private static String completeAllDone(String uids, int count, long epoch) {
    return ("EXECUTE complete(604800, '%s', array_fill('done'::text, ARRAY[%d]), '{}', '{}',"
            + " array_fill(now(), ARRAY[%2$d]), array_fill(now(), ARRAY[%2$d]), '{}', '{}', '{}',"
            + " '{}', '{}', '{}', %d)")
        .formatted(uids, count, epoch);
  }

  /** The jobs by status, as {@code done=10 pending=19990}. */
  private static String statusCounts(Statement s) throws SQLException {
    return firstValue(
        s,
        "SELECT string_agg(status || '=' || n, ' ' ORDER BY status)"
            + " FROM (SELECT status, count(*) AS n FROM jobs GROUP BY 1) t");
  }

  /** Takes a new fencing epoch (in the caller's transaction) and returns it. */
  private static long newEpoch(Statement s) throws SQLException {
    return firstLong(
        s,
        "INSERT INTO job_owner_epochs (lock_name, epoch, holder, taken_at)"
            + " SELECT 'stale-statistics-test', coalesce(max(epoch), 0) + 1000, 'test',"
            + " now() FROM job_owner_epochs RETURNING epoch");
  }

  /** The first column of the first row {@code sql} answers, as a number. */
  private static long firstLong(Statement s, String sql) throws SQLException {
    return Long.parseLong(firstValue(s, sql));
  }

  /** The first column of the first row {@code sql} answers, as text. */
  private static String firstValue(Statement s, String sql) throws SQLException {
    try (ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getString(1);
    }
  }

  /**
   * The rows of jobs (index entries and sequential reads) that running {@code sql} read, with what
   * functions it called read.
   */
  private static long rowsReadBy(Statement s, String sql) throws SQLException {
    long before = rowsReadSoFar(s);
    s.execute(sql);
    return rowsReadSoFar(s) - before;
  }

  /** Statistics taken while no job waited: 5,000 finished jobs, none pending. */
  private static void staleStatistics(Statement s) throws SQLException {
    s.execute(
        "INSERT INTO jobs (uid, kind, status, owner_kind, owner_id, payload, created_at,"
            + " updated_at, completed_at, expires_at) SELECT gen_random_uuid(), 'fork', 'done',"
            + " 'user', 'bob', '{}', now(), now(), now(), now() FROM generate_series(1, 5000)");
    s.execute("ANALYZE jobs");
  }

  /** The rows of jobs (index entries and sequential reads) this transaction has read so far. */
  private static long rowsReadSoFar(Statement s) throws SQLException {
    return firstLong(
        s,
        "SELECT (SELECT coalesce(sum(pg_stat_get_xact_tuples_returned(indexrelid)), 0)"
            + " FROM pg_index WHERE indrelid = 'jobs'::regclass)"
            + " + pg_stat_get_xact_tuples_returned('jobs'::regclass)");
  }
}
