package io.asyncjobs.queue;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.asyncjobs.testing.Database;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The statements that run on a timer or on a page view read no history: on a table of 300,000
 * finished jobs (five kinds, a thousand owners, a week of completions, a tenth of them expired),
 * none of them plans a sequential scan of {@code jobs}, neither as a one-off (custom) plan nor as
 * the generic plan a prepared statement settles on. The rows are made, analysed and planned in one
 * transaction that is rolled back, so no other test sees them.
 */
@QuarkusTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class QueryPlansTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  @Inject Database db;

  private Connection c;

  @BeforeAll
  void fillALargeTable() throws Exception {
    // Tests that ran before in this JVM left dead rows behind in the partial claim indexes, which
    // tipped the planner between two claim indexes of nearly the same cost: the plans below are
    // of this table alone.
    try (Connection vacuum = db.dataSource().getConnection();
        Statement s = vacuum.createStatement()) {
      vacuum.setAutoCommit(true);
      s.execute("DELETE FROM jobs");
      s.execute("VACUUM jobs");
    }
    c = db.dataSource().getConnection();
    c.setAutoCommit(false);
    try (Statement s = c.createStatement()) {
      s.execute("DELETE FROM jobs");
      // uids sort by creation time, as UUIDv7 do.
      s.execute(
          """
          INSERT INTO jobs (uid, kind, status, owner_kind, owner_id, payload, result, created_at,
                            started_at, completed_at, updated_at, duration_ms, expires_at,
                            bytes_in, bytes_out, item_count, epoch)
          SELECT (lpad(to_hex((extract(epoch FROM t) * 1000)::bigint), 12, '0')
                  || substr(md5(i::text), 1, 20))::uuid,
                 (ARRAY['zip', 'fork', 'seo', 'deepsearch', 'seo_meta'])[1 + i % 5],
                 CASE WHEN i % 100 = 0 THEN 'failed' ELSE 'done' END,
                 'user', 'owner-' || (i % 1000),
                 jsonb_build_object('paths', jsonb_build_array('/data/some/folder/' || i)),
                 jsonb_build_object('file', 'artifacts/x/' || i || '.zip'),
                 t, t, t + interval '2 seconds', t + interval '2 seconds', 2000 + i % 500,
                 t + interval '7 days' - interval '17 hours', 1000, 2000, 10, 1
            FROM generate_series(1, 300000) AS i,
                 LATERAL (SELECT now() - interval '7 days' + i * interval '2 seconds') AS g(t)
          """);
      s.execute(
          """
          INSERT INTO jobs (uid, kind, status, owner_kind, owner_id, payload, created_at,
                            updated_at, expires_at, epoch, started_at)
          SELECT (lpad(to_hex((extract(epoch FROM now()) * 1000)::bigint + i), 12, '0')
                  || substr(md5('p' || i), 1, 20))::uuid,
                 (ARRAY['zip', 'fork', 'seo', 'deepsearch', 'seo_meta'])[1 + i % 5],
                 CASE WHEN i % 20 = 0 THEN 'running' ELSE 'pending' END,
                 'user', 'owner-' || (i % 1000), '{}', now(), now(), now() + interval '7 days',
                 1, CASE WHEN i % 20 = 0 THEN now() END
            FROM generate_series(1, 2000) AS i
          """);
      // The finished jobs are counted when their transaction commits (V31); this one never does,
      // so that the table is left as it was found: the count is made now instead.
      s.execute("SET CONSTRAINTS job_totals_fold IMMEDIATE");
      s.execute("ANALYZE jobs");
      // The inserts' triggers counted a week of minutes; the sweep has purged none of them yet.
      s.execute("ANALYZE job_finished_minutes");
    }
  }

  @AfterAll
  void rollBack() throws Exception {
    c.rollback();
    c.close();
  }

  @Test
  void shouldReadTheQueueGaugesFromActiveRowsAndTotals() throws Exception {
    assertNoSeqScanOfJobs(QueueDepths.JOB_COUNT_BY_KIND_AND_STATUS);
  }

  @Test
  void shouldReadTheServiceCardsWithoutHistory() throws Exception {
    assertNoSeqScanOfJobs(CardQueries.CARD_ACTIVE);
    // Counts, sums and per-minute figures come from the trigger-kept aggregates alone.
    assertDoesNotReadJobs(CardQueries.CARD_TOTALS);
    String[] lastHour = {"now() - interval '1 hour'", "now() - interval '1 hour'", "now()"};
    assertDoesNotReadJobs(CardQueries.CARD_MINUTES, lastHour);
    assertThat(count("SELECT count(*) FROM job_finished_minutes"))
        .as("minutes beyond the last hour")
        .isGreaterThan(10_000);
    assertNoSeqScan("job_finished_minutes", CardQueries.CARD_MINUTES, lastHour);
    assertNoSeqScanOfJobs(
        CardQueries.CARD_DURATIONS,
        "now() - interval '1 hour'",
        String.valueOf(CardQueries.PERCENTILE_SAMPLE));
  }

  @Test
  void shouldFindOneKindsExpiredJobsThroughItsOwnIndex() throws Exception {
    assertNoSeqScanOfJobs(JobSweep.JOB_GET_EXPIRED_MANY, "'seo'", "now()", "1000");
    assertNoSeqScanOfJobs(JobSweep.JOB_COUNT_EXPIRED, "'seo'", "now()");
    assertThat(planOf(JobSweep.JOB_GET_EXPIRED_MANY, "force_generic_plan", "'seo'", "now()", "10"))
        .as("walks the kind's expiry index in order: no sort of the expired rows")
        .doesNotContain("\"Sort\"");
  }

  /**
   * V25 dropped two claim indexes because the release before (0.1.0, commit 430cc33) reads neither:
   * its claims, copied here from its JobStore, still walk the due index and the fair index in byte
   * order on this schema, in claim order, without a sequential scan or a sort. Should a later
   * migration drop what they walk, a rollback to it would stall, and this fails first.
   */
  @Test
  void shouldServeTheReleaseBeforesClaimsWithTheIndexesLeft() throws Exception {
    String due = "kind = ? AND shard = ? AND status = 'pending' AND delayed_until IS NULL";
    String claim = "SELECT uid FROM jobs WHERE " + due + " ORDER BY (-priority), uid LIMIT ?";
    String claimAfter =
        "SELECT uid FROM jobs WHERE "
            + due
            + " AND ((-priority), uid) > (?::smallint, ?::uuid) ORDER BY (-priority), uid LIMIT ?";
    String ownerKey = "((COALESCE(owner_kind, '') || ':' || COALESCE(owner_id, '')) COLLATE \"C\")";
    String nextOwner =
        "SELECT "
            + ownerKey
            + " FROM jobs WHERE "
            + due
            + " AND (-priority) = ? AND "
            + ownerKey
            + " > ? ORDER BY 1 LIMIT 1";
    for (String mode : List.of("force_custom_plan", "force_generic_plan")) {
      for (String plan :
          List.of(
              planOf(claim, mode, "'zip'", "'zip-0'", "10"),
              planOf(
                  claimAfter,
                  mode,
                  "'zip'",
                  "'zip-0'",
                  "0",
                  "'00000000-0000-7000-8000-000000000000'",
                  "10"))) {
        assertThat(plan).as(mode).contains("jobs_due_claim_idx").doesNotContain("\"Sort\"");
      }
      assertThat(planOf(nextOwner, mode, "'zip'", "'zip-0'", "0", "''"))
          .as(mode)
          .contains("jobs_fair_claim_bytes_idx")
          .doesNotContain("\"Sort\"");
    }
    assertNoSeqScanOfJobs(claim, "'zip'", "'zip-0'", "10");
    assertNoSeqScanOfJobs(nextOwner, "'zip'", "'zip-0'", "0", "''");
  }

  @Test
  void shouldFindTheShardsWithJobsWithoutReadingTheFinishedOnes() throws Exception {
    // Every tick's look for retired shards: a probe of the claim index per shard, not the table.
    assertNoSeqScanOfJobs(JobShards.JOB_ACTIVE_SHARDS);
  }

  @Test
  void shouldClaimFromOneShardWithoutWalkingTheKindsOtherShards() throws Exception {
    // A backlog of 20,000 pending zips in one shard, and a few in another.
    try (Statement s = c.createStatement()) {
      s.execute(
          """
          INSERT INTO jobs (uid, kind, status, owner_kind, owner_id, payload, created_at,
                            updated_at, expires_at, shard)
          SELECT (lpad(to_hex((extract(epoch FROM now()) * 1000)::bigint + 5000 + i), 12, '0')
                  || substr(md5('s' || i), 1, 20))::uuid,
                 'zip', 'pending', 'user', 'flood', '{}', now(), now(), now() + interval '7 days',
                 CASE WHEN i % 1000 = 0 THEN 'zip-1' ELSE 'zip-0' END
            FROM generate_series(1, 20000) AS i
          """);
      s.execute("ANALYZE jobs");
    }
    // The claim after a cursor: epoch, kind, shard, cursor, room, time, epoch.
    String[] after = {
      "1", "'zip'", "'zip-1'", "0", "'00000000-0000-7000-8000-000000000000'", "10", "now()", "1"
    };
    // The fair claim over the same shards: epoch, kind, shard, owner cursor, room, quota, time,
    // epoch.
    String[] fair = {"1", "'zip'", "'zip-0'", "''", "10", "2", "now()", "1"};
    // Under a running quota per owner: epoch, kind, shard, room, quota, time, epoch.
    String[] capped = {"1", "'zip'", "'zip-0'", "10", "2", "now()", "1"};
    for (String mode : List.of("force_custom_plan", "force_generic_plan")) {
      // The walk itself is jobs_due_for_claim's (V24) and the update jobs_start's (V27), each
      // planned inside its function; their reads are counted in StaleStatisticsTest.
      String claimPlan = planOf(JobClaims.JOB_CLAIM_MANY, mode, after);
      assertThat(claimPlan).as(mode).contains("jobs_due_for_claim").doesNotContain("\"Sort\"");
      List<String> claimScans = new ArrayList<>();
      seqScansOf("jobs", new ObjectMapper().readTree(claimPlan), claimScans);
      assertThat(claimScans).as(mode + ": the claim reads jobs by key only").isEmpty();
      String fairPlan = planOf(JobClaims.JOB_CLAIM_FAIR, mode, fair);
      // The owners are walked in byte order (COLLATE "C"), through the index that holds them so
      // (V23); V14's index in the database's collation cannot serve that walk.
      assertThat(fairPlan).as(mode).contains("jobs_fair_claim_bytes_idx");
      List<String> scans = new ArrayList<>();
      seqScansOf("jobs", new ObjectMapper().readTree(fairPlan), scans);
      assertThat(scans).as(mode + ": the fair claim reads jobs by index only").isEmpty();
      String releasePlan =
          planOf(
              JobClaims.JOB_RELEASE_DUE,
              mode,
              "1",
              "'zip'",
              "'zip-0'",
              "now()",
              "'zip'",
              "'zip-0'",
              "now()");
      assertThat(releasePlan).as(mode).contains("jobs_delayed_idx");
      seqScansOf("jobs", new ObjectMapper().readTree(releasePlan), scans);
      // The tick's look for due callbacks reads their own partial index, not the backlog.
      String callbackPlan =
          planOf(
              CallbackStore.JOB_CALLBACK_TAKE,
              mode,
              "1",
              "now()",
              "'zip'",
              "'zip-0'",
              "now()",
              "16");
      assertThat(callbackPlan).as(mode).contains("jobs_callback_due_idx");
      seqScansOf("jobs", new ObjectMapper().readTree(callbackPlan), scans);
      String cappedPlan = planOf(JobClaims.JOB_CLAIM_CAPPED, mode, capped);
      assertThat(cappedPlan).as(mode).contains("jobs_due_claim_idx");
      seqScansOf("jobs", new ObjectMapper().readTree(cappedPlan), scans);
      assertThat(scans).as(mode + ": the capped claim reads jobs by index only").isEmpty();
    }
  }

  @Test
  void shouldFindTheKindsOfTheJobsOneIndexProbePerKind() throws Exception {
    // Bulk actions over every kind: five kinds among 302,000 jobs.
    assertNoSeqScanOfJobs(JobBulk.JOB_KINDS_PRESENT);
  }

  @Test
  void shouldTellWhetherAnEnqueueMustWakeTheOwnerThroughAnIndex() throws Exception {
    // Every enqueue asks it, with and without a running quota per owner.
    String probe =
        "SELECT "
            + JobInserter.mayBeIdle("i")
            + " FROM (SELECT 'zip'::text AS kind, 'all'::text AS shard, 'user'::text AS owner_kind,"
            + " 'owner-7'::text AS owner_id) i";
    assertNoSeqScanOfJobs(probe, "0");
    assertNoSeqScanOfJobs(probe, "2");
  }

  @Test
  void shouldTellWhetherAnEnqueueMayStartItsJobThroughAnIndex() throws Exception {
    // The owner's enqueue that starts its job when nothing due waits asks it of the claim index.
    assertNoSeqScanOfJobs(
        JobInserter.JOB_INSERT_ONE_STARTED,
        "'018f0000-0000-7000-8000-000000000001'",
        "'zip'",
        "'user'",
        "'owner-7'",
        "NULL",
        "'{}'",
        "now()",
        "now()",
        "now()",
        "'zip'",
        "3600",
        "'zip'",
        "0",
        "NULL",
        "NULL",
        "NULL",
        "NULL",
        "1",
        "now()",
        "1");
  }

  @Test
  void shouldPageAnOwnersJobsThroughAnIndexEndingInUid() throws Exception {
    String page = JobReads.listSql(true, false, false, true);
    assertNoSeqScanOfJobs(
        page, "'user'", "'owner-7'", "'ffffffff-ffff-7fff-bfff-ffffffffffff'", "51");
    for (String mode : List.of("force_custom_plan", "force_generic_plan")) {
      String plan =
          planOf(page, mode, "'user'", "'owner-7'", "'ffffffff-ffff-7fff-bfff-ffffffffffff'", "51");
      assertThat(plan).as(mode).contains("jobs_owner_uid_idx").doesNotContain("\"Sort\"");
    }
    assertNoSeqScanOfJobs(JobReads.listSql(false, false, true, false), "'pending'", "51");
    assertNoSeqScanOfJobs(JobReads.listSql(false, true, true, false), "'zip'", "'failed'", "51");
    assertNoSeqScanOfJobs(
        JobReads.listSql(true, false, true, false), "'user'", "'owner-7'", "'pending'", "51");
  }

  /** Plans {@code sql} both ways and fails naming each sequential scan of jobs it finds. */
  private void assertNoSeqScanOfJobs(String sql, String... args) throws Exception {
    assertNoSeqScan("jobs", sql, args);
  }

  /** Plans {@code sql} both ways and fails naming each sequential scan of {@code table}. */
  private void assertNoSeqScan(String table, String sql, String... args) throws Exception {
    for (String mode : List.of("force_custom_plan", "force_generic_plan")) {
      String plan = planOf(sql, mode, args);
      List<String> scans = new ArrayList<>();
      seqScansOf(table, JSON.readTree(plan), scans);
      assertThat(scans)
          .as("sequential scans of %s (%s) in %s\n%s", table, mode, sql, plan)
          .isEmpty();
    }
  }

  private long count(String sql) throws Exception {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** Plans {@code sql} both ways and fails if either plan reads the jobs table at all. */
  private void assertDoesNotReadJobs(String sql, String... args) throws Exception {
    for (String mode : List.of("force_custom_plan", "force_generic_plan")) {
      assertThat(planOf(sql, mode, args))
          .as("%s plan of %s", mode, sql)
          .doesNotContain("\"Relation Name\": \"jobs\"");
    }
  }

  /** The JSON plan of {@code sql}, its {@code ?} bound to {@code args} (SQL expressions). */
  private String planOf(String sql, String mode, String... args) throws Exception {
    long n = PreparedSql.placeholders(sql);
    assertThat(args).as("arguments of %s", sql).hasSize((int) n);
    try (Statement s = c.createStatement()) {
      s.execute("SET LOCAL plan_cache_mode = " + mode);
      s.execute("PREPARE planned AS " + PreparedSql.numbered(sql));
      try {
        String execute =
            n == 0 ? "EXECUTE planned" : "EXECUTE planned(" + String.join(", ", args) + ")";
        try (ResultSet rs = s.executeQuery("EXPLAIN (FORMAT JSON) " + execute)) {
          rs.next();
          return rs.getString(1);
        }
      } finally {
        s.execute("DEALLOCATE planned");
      }
    }
  }

  private static void seqScansOf(String table, JsonNode node, List<String> found) {
    if (node.isObject()
        && "Seq Scan".equals(node.path("Node Type").asText())
        && table.equals(node.path("Relation Name").asText())) {
      found.add(node.toString());
    }
    for (JsonNode child : node) {
      seqScansOf(table, child, found);
    }
  }
}
