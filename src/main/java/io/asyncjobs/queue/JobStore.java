package io.asyncjobs.queue;

import io.agroal.api.AgroalDataSource;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The engine's SQL: each statement is named (noun + verb), takes the current time as a parameter
 * and touches many rows in one round trip. Every write to a running row checks the fencing epoch,
 * so an owner that lost the lock cannot change what the next owner claimed.
 */
@ApplicationScoped
public class JobStore {

  private static final String JOB_COLUMNS = JobRows.COLUMNS;

  /**
   * The fence every statement that starts work begins with: the lock's recorded epoch, locked FOR
   * SHARE, present only while the caller's epoch is still the newest. Epochs come from one sequence
   * for every lock, so the epoch alone names the holding (whichever shard's lock it is of). Taking
   * a new epoch ({@code io.asyncjobs.lock.Epochs}) updates that row, so it waits for these
   * statements to commit, and once it has, none under the older epoch can start anything.
   */
  private static final String FENCE =
      "fence AS (SELECT epoch FROM job_owner_epochs WHERE epoch = ? FOR SHARE)";

  /**
   * The claim itself: the due pending jobs of a kind in one shard become running under the fence's
   * epoch, highest priority first, then oldest first. SKIP LOCKED lets a concurrent claimer take
   * other rows instead of waiting. The partial index on due pending rows by kind, shard, negated
   * priority and uid serves the inner query in its order. The uids are collected into an array
   * first so that the outer update looks them up by primary key whatever row count the planner
   * guesses for a LIMIT parameter.
   */
  private static final String CLAIM =
      """
      claimed AS (
        UPDATE jobs
           SET status = 'running', started_at = ?, updated_at = ?, epoch = ?
         WHERE uid = ANY (ARRAY(SELECT uid FROM jobs
                                 WHERE kind = ? AND shard = ? AND status = 'pending'
                                   AND delayed_until IS NULL
                                   AND EXISTS (SELECT 1 FROM fence)
                                 ORDER BY (-priority), uid
                                 LIMIT ?
                                 FOR UPDATE SKIP LOCKED))
        RETURNING\s"""
          + JOB_COLUMNS
          + ")";

  /**
   * The claim for due pending jobs after a cursor, the last job (by priority, then uid) this owner
   * already claimed. Within a burst the head of the queue is a run of rows that just stopped being
   * pending; starting after the cursor skips it in one index descent. Jobs that sort before the
   * cursor (recovered orphans, retries, a higher priority than the cursor's) are left to the tick's
   * claim from the head, or to a wake-up that asked for the head, as an enqueue with a priority
   * above the default does.
   */
  private static final String CLAIM_AFTER =
      CLAIM.replace(
          "AND delayed_until IS NULL",
          "AND delayed_until IS NULL AND ((-priority), uid) > (?::smallint, ?::uuid)");

  /**
   * JobClaimMany: claims, in one statement, and says whether the fence let it (first column: 1, or
   * 0 when a newer epoch was taken); each row carries one claimed job (all null when none was).
   */
  static final String JOB_CLAIM_MANY =
      "WITH "
          + FENCE
          + ", "
          + CLAIM
          + " SELECT (SELECT count(*) FROM fence) AS fenced_in, k.*"
          + " FROM (SELECT 1) AS one LEFT JOIN claimed AS k ON true";

  /**
   * The fair claim index's owner key (V23), as an expression over a row of {@code jobs}. Owners
   * take turns in the order of its bytes ({@code COLLATE "C"}), the order {@link #inTurns} and the
   * runner's cursor use: under the database's own collation (en_US, say) the walk would put {@code
   * user:alice} before {@code user:Bob} and the runner after it, and serve owners out of turn.
   */
  private static final String OWNER_KEY =
      "((COALESCE(owner_kind, '') || ':' || COALESCE(owner_id, '')) COLLATE \"C\")";

  /**
   * The due pending rows of the claim's kind and shard at the top priority (the CTE {@code top}).
   */
  private static final String FAIR_ROWS =
      "kind = (SELECT kind FROM p) AND shard = (SELECT shard FROM p) AND status = 'pending'"
          + " AND delayed_until IS NULL AND (-priority) = (SELECT np FROM top)";

  /** The owner after the walk's row {@code w}, by owner key, among the due jobs of the level. */
  private static final String NEXT_OWNER =
      "(SELECT "
          + OWNER_KEY
          + " FROM jobs WHERE "
          + FAIR_ROWS
          + " AND "
          + OWNER_KEY
          + " > w.ok ORDER BY 1 LIMIT 1)";

  /**
   * The kind's running jobs by owner (few: at most its concurrency over its shards), and the owners
   * at the running quota {@code p.cap} (none when it is 0).
   */
  private static final String RUNNING_AND_CAPPED =
      " running AS (SELECT "
          + OWNER_KEY
          + " AS ok, count(*) AS n FROM jobs WHERE kind = (SELECT kind FROM p)"
          + "   AND status = 'running' GROUP BY 1),"
          + " capped AS (SELECT ok FROM running WHERE (SELECT cap FROM p) > 0"
          + "   AND n >= (SELECT cap FROM p))";

  /** How many owners a fair claim's walk visits: the room, and one more per owner at its quota. */
  private static final String VISITS = "(SELECT room FROM p) + (SELECT count(*) FROM capped)";

  /**
   * JobClaimCapped: JobClaimMany under a running quota per owner ({@code p.cap} above 0): owners at
   * it are passed over, and within the claim no owner gets more than its room under it. The
   * candidates are read in claim order; a claim may take fewer than its room when one owner's jobs
   * fill the head, and the next one passes over that owner. Columns as JobClaimMany's.
   */
  static final String JOB_CLAIM_CAPPED =
      "WITH "
          + FENCE
          + ", p AS (SELECT ?::text AS kind, ?::text AS shard, ?::int AS room, ?::int AS cap),"
          + RUNNING_AND_CAPPED
          + ", claimed AS (UPDATE jobs SET status = 'running', started_at = ?, updated_at = ?,"
          + "   epoch = ? WHERE uid = ANY (ARRAY(SELECT w.uid FROM (SELECT c.uid, c.np,"
          + "   row_number() OVER (PARTITION BY c.ok ORDER BY c.np, c.uid)"
          + "   + COALESCE((SELECT r.n FROM running r WHERE r.ok = c.ok), 0) AS load"
          + "   FROM (SELECT uid, (-priority) AS np, "
          + OWNER_KEY
          + " AS ok FROM jobs WHERE kind = (SELECT kind FROM p) AND shard = (SELECT shard FROM p)"
          + "   AND status = 'pending' AND delayed_until IS NULL AND EXISTS (SELECT 1 FROM fence)"
          + "   AND "
          + OWNER_KEY
          + " NOT IN (SELECT ok FROM capped)"
          + "   ORDER BY (-priority), uid LIMIT (SELECT room FROM p) FOR UPDATE SKIP LOCKED) c) w"
          + "   WHERE w.load <= (SELECT cap FROM p) ORDER BY w.np, w.uid))"
          + "   RETURNING "
          + JOB_COLUMNS
          + ")"
          + " SELECT (SELECT count(*) FROM fence) AS fenced_in, k.*"
          + " FROM (SELECT 1) AS one LEFT JOIN claimed AS k ON true";

  /**
   * JobClaimFair: claims in turns between owners. Among the due pending jobs of the top priority
   * level, it walks the owners from the one after the cursor (a loose scan of the fair index, one
   * probe per owner, at most the claim's room of them, then from the first owner up to the cursor),
   * and takes each owner's oldest jobs, as many each as the room shared out over the owners found,
   * one round of owners at a time. A level with fewer jobs than the room leaves the rest to the
   * next claim, which finds the next level. Columns as JobClaimMany's.
   */
  static final String JOB_CLAIM_FAIR =
      "WITH RECURSIVE "
          + FENCE
          + ", p AS (SELECT ?::text AS kind, ?::text AS shard, ?::text COLLATE \"C\" AS cursor,"
          + "   ?::int AS room,"
          + "   ?::int AS cap),"
          + RUNNING_AND_CAPPED
          + ", top AS (SELECT (-priority) AS np FROM jobs WHERE kind = (SELECT kind FROM p)"
          + "   AND shard = (SELECT shard FROM p) AND status = 'pending' AND delayed_until IS NULL"
          + "   AND "
          + OWNER_KEY
          + " NOT IN (SELECT ok FROM capped) ORDER BY (-priority) LIMIT 1),"
          + " walk(ok, n) AS ("
          + "   (SELECT "
          + OWNER_KEY
          + ", 1 FROM jobs WHERE "
          + FAIR_ROWS
          + " AND "
          + OWNER_KEY
          + " > (SELECT cursor FROM p) ORDER BY 1 LIMIT 1)"
          + "   UNION ALL SELECT "
          + NEXT_OWNER
          + ", w.n + 1"
          + "   FROM walk w WHERE w.ok IS NOT NULL AND w.n < "
          + VISITS
          + "),"
          + " wrap(ok, n) AS ("
          + "   (SELECT "
          + OWNER_KEY
          + ", 1 FROM jobs WHERE "
          + FAIR_ROWS
          + " ORDER BY 1 LIMIT 1)"
          + "   UNION ALL SELECT "
          + NEXT_OWNER
          + ", w.n + 1"
          + "   FROM wrap w WHERE w.ok IS NOT NULL AND w.ok < (SELECT cursor FROM p)"
          + "     AND w.n < "
          + VISITS
          + "),"
          + " owners AS (SELECT ok, pos FROM (SELECT ok, n AS pos FROM walk WHERE ok IS NOT NULL"
          + "   UNION ALL SELECT ok, 1000000 + n FROM wrap"
          + "   WHERE ok IS NOT NULL AND ok <= (SELECT cursor FROM p)) o"
          + "   WHERE o.ok NOT IN (SELECT ok FROM capped)"
          + "   ORDER BY pos LIMIT (SELECT room FROM p)),"
          + " share AS (SELECT ((SELECT room FROM p) + count(*) - 1) / GREATEST(count(*), 1) AS each"
          + "   FROM owners),"
          + " picks AS (SELECT j.uid, o.pos, j.rn FROM owners o, LATERAL (SELECT uid,"
          + "   row_number() OVER (ORDER BY uid) AS rn FROM jobs WHERE "
          + FAIR_ROWS
          + " AND "
          + OWNER_KEY
          + " = o.ok ORDER BY uid LIMIT LEAST((SELECT each FROM share), CASE WHEN"
          + "   (SELECT cap FROM p) > 0 THEN (SELECT cap FROM p) - COALESCE((SELECT r.n FROM"
          + "   running r WHERE r.ok = o.ok), 0) ELSE 2147483647 END)) j),"
          + " claimed AS (UPDATE jobs SET status = 'running', started_at = ?, updated_at = ?,"
          + "   epoch = ? WHERE uid = ANY (ARRAY(SELECT uid FROM jobs WHERE uid IN (SELECT uid"
          + "   FROM picks ORDER BY rn, pos LIMIT (SELECT room FROM p)) AND status = 'pending'"
          + "   AND EXISTS (SELECT 1 FROM fence) FOR UPDATE SKIP LOCKED))"
          + "   RETURNING "
          + JOB_COLUMNS
          + ")"
          + " SELECT (SELECT count(*) FROM fence) AS fenced_in, k.*"
          + " FROM (SELECT 1) AS one LEFT JOIN claimed AS k ON true";

  /** JobClaimManyAfter: JobClaimMany after a cursor. */
  static final String JOB_CLAIM_MANY_AFTER = JOB_CLAIM_MANY.replace(CLAIM, CLAIM_AFTER);

  /**
   * JobCompleteMany: writes the outcomes of finished tasks. A row is written only while it is still
   * running under the writer's epoch (an older epoch's outcome is still the truth about a job that
   * nobody else touched); the returned rows are those actually written, with the status written.
   * Retention restarts at completion. The start is written again: a job claimed ahead of a free
   * thread began later than its claim. Progress reported since the last progress write lands here
   * too, and a done job that reported a fraction shows it complete.
   */
  private static final String COMPLETE =
      """
      UPDATE jobs j
         SET status = c.status,
             result = c.result::jsonb,
             error = c.error,
             started_at = c.started_at,
             completed_at = c.completed_at,
             updated_at = c.completed_at,
             duration_ms = c.duration_ms,
             expires_at = c.completed_at + make_interval(secs => ?),
             bytes_in = c.bytes_in,
             bytes_out = c.bytes_out,
             item_count = c.item_count,
             progress = CASE WHEN c.status = 'done' AND COALESCE(c.progress, j.progress) IS NOT NULL
                             THEN 1 ELSE COALESCE(c.progress, j.progress) END,
             progress_items = COALESCE(c.progress_items, j.progress_items),
             progress_at = CASE WHEN c.progress IS NOT NULL OR c.progress_items IS NOT NULL
                                  OR (c.status = 'done' AND j.progress IS NOT NULL)
                                THEN c.completed_at ELSE j.progress_at END
        FROM unnest(?::uuid[], ?::text[], ?::text[], ?::text[], ?::timestamptz[], ?::timestamptz[],
                    ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::float8[], ?::bigint[])
             AS c(uid, status, result, error, started_at, completed_at, duration_ms, bytes_in,
                  bytes_out, item_count, progress, progress_items)
       WHERE j.uid = c.uid AND j.status = 'running' AND j.epoch = ?
      RETURNING j.uid, j.status""";

  private static final String JOB_COMPLETE_MANY = COMPLETE;

  /**
   * JobCompleteAndClaimMany: JobCompleteMany and JobClaimManyAfter in one statement, for the
   * wake-up path: one round trip and one commit hand back finished slots and fill them again. The
   * two updates touch disjoint rows (running and pending). Columns: whether the fence let the claim
   * in, the uids written and the statuses written (arrays, in the same order, on the first row
   * only: repeated on every row they made the answer grow with the square of the batch), then one
   * claimed job per row and its place among them.
   */
  private static final String JOB_COMPLETE_AND_CLAIM_MANY =
      "WITH "
          + FENCE
          + ", completed AS ("
          + COMPLETE
          + "), "
          + CLAIM_AFTER
          + " SELECT (SELECT count(*) FROM fence) AS fenced_in,"
          + " CASE WHEN k.nth IS NULL OR k.nth = 1"
          + " THEN (SELECT array_agg(uid) FROM completed) END AS completed,"
          + " CASE WHEN k.nth IS NULL OR k.nth = 1"
          + " THEN (SELECT array_agg(status) FROM completed) END AS statuses, k.*"
          + " FROM (SELECT 1) AS one"
          + " LEFT JOIN (SELECT claimed.*, row_number() OVER () AS nth FROM claimed) AS k ON true";

  /**
   * The SET list JobRescueMany and JobRetryMany share: a running job goes back to pending with one
   * more retry while it has retries left and no cancel asked it to stop, and otherwise fails, as
   * cancelled or with {@code exhausted} (an SQL expression) as its error. Reads {@code j} (the job)
   * and {@code p} (max_retries, now, retention).
   */
  private static String putBackOrFail(String exhausted) {
    return """
        UPDATE jobs j
           SET status = CASE WHEN (j.retry_count < p.max_retries AND NOT j.cancel_requested)
                             THEN 'pending' ELSE 'failed' END,
               retry_count = CASE WHEN (j.retry_count < p.max_retries AND NOT j.cancel_requested)
                                  THEN j.retry_count + 1 ELSE j.retry_count END,
               error = CASE WHEN j.cancel_requested THEN 'cancelled on request'
                            WHEN j.retry_count < p.max_retries THEN NULL
                            ELSE %s END,
               started_at = CASE WHEN (j.retry_count < p.max_retries AND NOT j.cancel_requested)
                                 THEN NULL ELSE j.started_at END,
               completed_at = CASE WHEN (j.retry_count < p.max_retries AND NOT j.cancel_requested)
                                   THEN NULL ELSE p.now END,
               expires_at = CASE WHEN (j.retry_count < p.max_retries AND NOT j.cancel_requested)
                                 THEN j.expires_at
                                 ELSE p.now + make_interval(secs => p.retention) END,
               updated_at = p.now
        """
        .formatted(exhausted);
  }

  /**
   * JobRescueMany: running rows of a kind that no task of this process works on were left by an
   * earlier owner (or their task vanished). Each goes back to pending with one more retry, or fails
   * once it has used up its retries. Rows of this owner's epoch are rescued at once; rows of older
   * epochs only once their owners have certainly stopped (the caller says so). Rows of other
   * shards, and rows stamped by a newer owner, are left alone, and nothing is rescued once a newer
   * epoch was taken.
   */
  private static final String JOB_RESCUE_MANY =
      "WITH "
          + FENCE
          + putBackOrFail(
              "'abandoned: its processor vanished ' || (j.retry_count + 1)"
                  + " || ' times (max-retries ' || p.max_retries || ')'")
          + """
             FROM (SELECT ?::int AS max_retries, ?::timestamptz AS now, ?::bigint AS retention) AS p
            WHERE j.kind = ? AND j.shard = ? AND j.status = 'running'
              AND NOT (j.uid = ANY (?::uuid[]))
              AND (j.epoch = ? OR (COALESCE(j.epoch, 0) < ? AND ?))
              AND EXISTS (SELECT 1 FROM fence)
           RETURNING j.status
           """;

  /**
   * JobRetryMany: jobs whose task failed because the database went away (their work never took
   * effect, or is repeated harmlessly) go back to pending with one more retry instead of failing,
   * or fail once their retries are used up. A job a cancel asked to stop fails as cancelled
   * instead, as in JobRescueMany: put back, it would run again, and no cancel would stop it (a
   * cancel asks the running job only once). Only rows still running under the writer's epoch.
   */
  private static final String JOB_RETRY_MANY =
      putBackOrFail(
              "r.error || ' (' || (j.retry_count + 1) || ' times; max-retries '"
                  + " || p.max_retries || ')'")
          + """
        FROM unnest(?::uuid[], ?::text[]) AS r(uid, error),
             (SELECT ?::int AS max_retries, ?::timestamptz AS now, ?::bigint AS retention) AS p
       WHERE j.uid = r.uid AND j.status = 'running' AND j.epoch = ?
      RETURNING j.uid, j.status
      """;

  /** How many failed attempts a job's {@code attempts} keeps, the latest ones. */
  public static final int ATTEMPTS_KEPT = 20;

  /**
   * Whether the attempt row {@code a} of job {@code j} goes back to pending (JobFailAttemptMany).
   */
  private static final String AGAIN = "(j.attempt + 1 < p.max_attempts AND NOT j.cancel_requested)";

  /**
   * JobFailAttemptMany: jobs whose task failed in a way the kind calls transient. Each counts one
   * more failed attempt and keeps it (error, start, end, when it is tried again) in {@code
   * attempts}, the last {@value #ATTEMPTS_KEPT} of them; while attempts are left under {@code
   * max_attempts} (and no cancel was asked for) it goes back to pending, delayed until its retry
   * time, so that only the due-time release makes it claimable again; otherwise it fails with the
   * attempt's error. Only rows still running under the writer's epoch.
   */
  private static final String JOB_FAIL_ATTEMPT_MANY =
      ("""
      UPDATE jobs j
         SET status = CASE WHEN AGAIN THEN 'pending' ELSE 'failed' END,
             attempt = j.attempt + 1,
             attempts = (SELECT jsonb_agg(k.e ORDER BY k.n) FROM (
                           SELECT x.e, x.n FROM jsonb_array_elements(
                               COALESCE(j.attempts, '[]'::jsonb) || jsonb_build_array(
                                 jsonb_build_object('attempt', j.attempt + 1, 'error', a.error,
                                   'started_at', a.started_at, 'ended_at', a.ended_at,
                                   'retry_at', CASE WHEN AGAIN THEN a.retry_at END)))
                             WITH ORDINALITY AS x(e, n)
                            ORDER BY x.n DESC LIMIT KEPT) AS k),
             delayed_until = CASE WHEN AGAIN THEN a.retry_at::timestamptz END,
             error = CASE WHEN AGAIN THEN NULL
                          WHEN j.cancel_requested THEN 'cancelled on request'
                          WHEN p.max_attempts > 1
                            THEN a.error || ' (attempt ' || (j.attempt + 1) || ' of '
                                 || GREATEST(p.max_attempts, j.attempt + 1) || ')'
                          ELSE a.error END,
             started_at = CASE WHEN AGAIN THEN NULL ELSE a.started_at::timestamptz END,
             completed_at = CASE WHEN AGAIN THEN NULL ELSE a.ended_at::timestamptz END,
             duration_ms = CASE WHEN AGAIN THEN NULL ELSE a.duration_ms END,
             expires_at = CASE WHEN AGAIN THEN j.expires_at
                               ELSE a.ended_at::timestamptz + make_interval(secs => p.retention) END,
             progress = CASE WHEN AGAIN THEN NULL ELSE j.progress END,
             progress_items = CASE WHEN AGAIN THEN NULL ELSE j.progress_items END,
             progress_at = CASE WHEN AGAIN THEN NULL ELSE j.progress_at END,
             updated_at = p.now
        FROM unnest(?::uuid[], ?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[])
               AS a(uid, error, started_at, ended_at, retry_at, duration_ms),
             (SELECT ?::int AS max_attempts, ?::timestamptz AS now, ?::bigint AS retention) AS p
       WHERE j.uid = a.uid AND j.status = 'running' AND j.epoch = ?
      RETURNING j.uid, j.status
      """)
          .replace("AGAIN", AGAIN)
          .replace("KEPT", Integer.toString(ATTEMPTS_KEPT));

  /**
   * JobAdoptMany: an owner that took the lock back at a new epoch keeps the jobs it is still
   * running: rows still running under an epoch their task's row may carry (the claim's, or one
   * adopted under since) are stamped with the new one. A row someone else touched meanwhile is not.
   * Fenced like a claim.
   */
  private static final String JOB_ADOPT_MANY =
      "WITH "
          + FENCE
          + """
           UPDATE jobs j
              SET epoch = (SELECT epoch FROM fence), updated_at = ?
             FROM (SELECT DISTINCT * FROM unnest(?::uuid[], ?::bigint[])) AS a(uid, epoch)
            WHERE j.uid = a.uid AND j.status = 'running' AND j.epoch = a.epoch
              AND EXISTS (SELECT 1 FROM fence)
           RETURNING j.uid
           """;

  /** JobGetCancelRequestedMany: which of these running jobs a caller asked to stop. */
  private static final String JOB_GET_CANCEL_REQUESTED_MANY =
      "SELECT uid FROM jobs WHERE uid = ANY (?::uuid[]) AND status = 'running' AND cancel_requested";

  /**
   * JobReleaseMany: running jobs this owner stopped without an outcome (a graceful handover, or
   * work interrupted because the lock was lost) go back to pending without counting a retry, so the
   * next owner starts them first; a job whose cancel was requested fails as cancelled instead of
   * running again. Only rows still running under the given epoch.
   */
  private static final String JOB_RELEASE_MANY =
      """
      UPDATE jobs j
         SET status = CASE WHEN j.cancel_requested THEN 'failed' ELSE 'pending' END,
             error = CASE WHEN j.cancel_requested THEN 'cancelled on request' ELSE j.error END,
             started_at = CASE WHEN j.cancel_requested THEN j.started_at END,
             completed_at = CASE WHEN j.cancel_requested THEN p.now END,
             expires_at = CASE WHEN j.cancel_requested THEN p.now + make_interval(secs => p.retention)
                               ELSE j.expires_at END,
             updated_at = p.now
        FROM (SELECT ?::timestamptz AS now, ?::bigint AS retention) AS p
       WHERE j.uid = ANY (?::uuid[]) AND j.status = 'running' AND j.epoch = ?
      RETURNING j.uid, j.status
      """;

  /**
   * JobProgressMany: writes the progress running jobs reported, each only while the job is still
   * running under the writer's epoch.
   */
  private static final String JOB_PROGRESS_MANY =
      """
      UPDATE jobs j
         SET progress = p.progress, progress_items = p.items, progress_at = ?
        FROM unnest(?::uuid[], ?::float8[], ?::bigint[]) AS p(uid, progress, items)
       WHERE j.uid = p.uid AND j.status = 'running' AND j.epoch = ?
      """;

  /**
   * JobGetExpiredMany: finished jobs of a kind whose retention has passed, oldest expiry first. A
   * job whose callback is still due (or under way) is kept until it is delivered or given up,
   * however short the kind's retention: deleting it would lose the callback.
   */
  public static final String JOB_GET_EXPIRED_MANY =
      "SELECT "
          + JOB_COLUMNS
          + """
           FROM jobs
          WHERE kind = ? AND status IN ('done', 'failed') AND expires_at <= ?
            AND callback_due IS NULL
          ORDER BY expires_at
          LIMIT ?
          """;

  /** JobCountExpired: how many rows JobGetExpiredMany would page through; the same condition. */
  public static final String JOB_COUNT_EXPIRED =
      """
      SELECT count(*) FROM jobs
       WHERE kind = ? AND status IN ('done', 'failed') AND expires_at <= ?
         AND callback_due IS NULL
      """;

  /** JobPurgeFinishedMinutes: forgets one kind's per-minute finished counts older than a time. */
  private static final String JOB_PURGE_FINISHED_MINUTES =
      "DELETE FROM job_finished_minutes WHERE kind = ? AND minute < ?";

  /**
   * JobDeleteMany: removes swept jobs whose artifacts are gone. Never a pending or running one, nor
   * one whose callback became due again meanwhile (retried and ended again).
   */
  private static final String JOB_DELETE_MANY =
      "DELETE FROM jobs WHERE uid = ANY (?::uuid[]) AND status IN ('done', 'failed')"
          + " AND callback_due IS NULL";

  /** JobDeferExpiryMany: keeps jobs whose cleanup failed until a later sweep tries again. */
  private static final String JOB_DEFER_EXPIRY_MANY =
      "UPDATE jobs SET expires_at = ? WHERE uid = ANY (?::uuid[]) AND status IN ('done', 'failed')";

  private final AgroalDataSource dataSource;

  JobStore(AgroalDataSource dataSource) {
    this.dataSource = dataSource;
  }

  /**
   * What a claim asks for: up to {@code limit} pending jobs of {@code kind} in {@code shard},
   * oldest first, under {@code epoch}.
   *
   * @param after only jobs with a larger uid, or null for all
   */
  public record ClaimRequest(
      String kind, String shard, int limit, long epoch, Instant now, ClaimCursor after) {}

  /**
   * Where a claim in priority order stopped: the last job it took, by priority (higher first), then
   * uid.
   */
  public record ClaimCursor(int priority, UUID uid) {

    /** Before every job of priority {@code priority}. */
    public static ClaimCursor before(int priority) {
      return new ClaimCursor(priority, new UUID(0, 0));
    }

    /** Whether {@code job} sorts after this cursor in the claim's order. */
    public boolean precedes(Job job) {
      if (job.priority != priority) {
        return job.priority < priority;
      }
      // uuids order as unsigned bytes in PostgreSQL, which is the order of their text.
      return job.uid.toString().compareTo(uid.toString()) > 0;
    }
  }

  /** Claims what {@code claim} asks for. */
  public Claimed claimMany(ClaimRequest claim) {
    if (claim.limit() <= 0) {
      return new Claimed(false, List.of());
    }
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(claim.after() == null ? JOB_CLAIM_MANY : JOB_CLAIM_MANY_AFTER)) {
      int next = bindFence(ps, 1, claim.epoch());
      bindClaim(ps, next, claim);
      return claimed(ps);
    } catch (SQLException e) {
      throw new StoreException("JobClaimMany failed for kind " + claim.kind(), e);
    }
  }

  /**
   * Claims in priority and uid order under a running quota of {@code runningCap} jobs per owner
   * ({@link #JOB_CLAIM_CAPPED}), from the head of the queue.
   */
  public Claimed claimCapped(ClaimRequest claim, int runningCap) {
    if (claim.limit() <= 0) {
      return new Claimed(false, List.of());
    }
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_CLAIM_CAPPED)) {
      int next = bindFence(ps, 1, claim.epoch());
      ps.setString(next++, claim.kind());
      ps.setString(next++, claim.shard());
      ps.setInt(next++, claim.limit());
      ps.setInt(next++, runningCap);
      ps.setObject(next++, JobRows.timestamp(claim.now()));
      ps.setObject(next++, JobRows.timestamp(claim.now()));
      ps.setLong(next, claim.epoch());
      return claimed(ps);
    } catch (SQLException e) {
      throw new StoreException("JobClaimCapped failed for kind " + claim.kind(), e);
    }
  }

  /** Reads the answer of a claim shaped as JobClaimMany's, in claim order. */
  private static Claimed claimed(PreparedStatement ps) throws SQLException {
    boolean fenced = false;
    List<Job> claimed = new ArrayList<>();
    try (ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        fenced = rs.getLong(1) == 0;
        if (rs.getObject(2) != null) {
          claimed.add(JobRows.read(rs, 1));
        }
      }
    }
    return new Claimed(fenced, inUidOrder(claimed));
  }

  /**
   * A claim in turns between owners ({@link #JOB_CLAIM_FAIR}).
   *
   * @param afterOwner the owner key the previous claim's turns ended with ({@link #ownerKey}); the
   *     empty string to start from the first owner
   */
  public record FairClaimRequest(
      String kind,
      String shard,
      int limit,
      long epoch,
      Instant now,
      String afterOwner,
      int runningCap) {}

  /**
   * Claims in turns between owners: up to {@code claim.limit()} due pending jobs of the top
   * priority level, in the order the turns give them ({@link #inTurns}).
   */
  public Claimed claimFair(FairClaimRequest claim) {
    if (claim.limit() <= 0) {
      return new Claimed(false, List.of());
    }
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_CLAIM_FAIR)) {
      int next = bindFence(ps, 1, claim.epoch());
      ps.setString(next++, claim.kind());
      ps.setString(next++, claim.shard());
      ps.setString(next++, claim.afterOwner());
      ps.setInt(next++, claim.limit());
      ps.setInt(next++, claim.runningCap());
      ps.setObject(next++, JobRows.timestamp(claim.now()));
      ps.setObject(next++, JobRows.timestamp(claim.now()));
      ps.setLong(next, claim.epoch());
      Claimed claimed = claimed(ps);
      return new Claimed(
          claimed.fenced(), inTurns(new ArrayList<>(claimed.jobs()), claim.afterOwner()));
    } catch (SQLException e) {
      throw new StoreException("JobClaimFair failed for kind " + claim.kind(), e);
    }
  }

  /**
   * JobReleaseDue: the shard's delayed pending jobs whose time has come become due (claimable),
   * under the fence; answers how many, and the earliest due time still ahead (null: none). Both
   * read the delayed index, never the queue.
   */
  static final String JOB_RELEASE_DUE =
      "WITH "
          + FENCE
          + ", released AS (UPDATE jobs SET delayed_until = NULL WHERE kind = ? AND shard = ?"
          + "   AND status = 'pending' AND delayed_until IS NOT NULL AND delayed_until <= ?"
          + "   AND EXISTS (SELECT 1 FROM fence) RETURNING 1)"
          + " SELECT (SELECT count(*) FROM released),"
          + " (SELECT min(delayed_until) FROM jobs WHERE kind = ? AND shard = ?"
          + "   AND status = 'pending' AND delayed_until IS NOT NULL AND delayed_until > ?)";

  /**
   * What releasing due jobs did.
   *
   * @param released how many delayed jobs became due
   * @param nextDue the earliest due time still ahead, or null
   */
  public record Released(int released, Instant nextDue) {}

  /** Makes the shard's delayed jobs due whose time is {@code now} or before (JobReleaseDue). */
  public Released releaseDue(String kind, String shard, long epoch, Instant now) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_RELEASE_DUE)) {
      ps.setLong(1, epoch);
      ps.setString(2, kind);
      ps.setString(3, shard);
      ps.setObject(4, JobRows.timestamp(now));
      ps.setString(5, kind);
      ps.setString(6, shard);
      ps.setObject(7, JobRows.timestamp(now));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new Released(rs.getInt(1), instant(rs, 2));
      }
    } catch (SQLException e) {
      throw new StoreException("JobReleaseDue failed for kind " + kind, e);
    }
  }

  /**
   * Writes finished tasks' outcomes under {@code epoch}. Should the batch be refused for what one
   * row holds (not for the connection), each outcome is written alone, and one that still cannot be
   * written fails its job with the reason instead.
   *
   * @return the rows actually written and the status each got; the others were no longer running
   *     under this epoch
   */
  public Map<UUID, JobStatus> completeMany(
      Collection<Completion> completions, long epoch, Duration retention) {
    if (completions.isEmpty()) {
      return Map.of();
    }
    try (Connection c = dataSource.getConnection()) {
      try {
        return complete(c, completions, epoch, retention);
      } catch (SQLException e) {
        if (DatabaseErrors.isConnectionLost(e)) {
          throw e;
        }
        if (completions.size() == 1) {
          return completeUnstorable(c, completions.iterator().next(), e, epoch, retention);
        }
        Map<UUID, JobStatus> written = new HashMap<>();
        for (Completion one : completions) {
          written.putAll(completeMany(List.of(one), epoch, retention));
        }
        return written;
      }
    } catch (SQLException e) {
      throw new StoreException("JobCompleteMany failed", e);
    }
  }

  /** A single outcome the database refused for its content: the job fails saying why. */
  private Map<UUID, JobStatus> completeUnstorable(
      Connection c, Completion completion, SQLException refusal, long epoch, Duration retention)
      throws SQLException {
    Completion failed =
        Completion.failed(
                completion.uid(),
                "its result could not be stored: " + refusal.getMessage(),
                completion.startedAt(),
                completion.completedAt())
            .withProgress(completion.lastProgress());
    return complete(c, List.of(failed), epoch, retention);
  }

  private static Map<UUID, JobStatus> complete(
      Connection c, Collection<Completion> completions, long epoch, Duration retention)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(JOB_COMPLETE_MANY)) {
      bindCompletions(c, ps, 1, completions, epoch, retention);
      return statuses(ps);
    }
  }

  /**
   * Writes finished tasks' outcomes under the claim's epoch and claims what {@code claim} asks for,
   * in one statement; {@code claim.after()} must not be null.
   */
  public CompleteAndClaim completeAndClaimMany(
      Collection<Completion> completions, Duration retention, ClaimRequest claim) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_COMPLETE_AND_CLAIM_MANY)) {
      int next = bindFence(ps, 1, claim.epoch());
      next = bindCompletions(c, ps, next, completions, claim.epoch(), retention);
      bindClaim(ps, next, claim);
      Map<UUID, JobStatus> written = new HashMap<>();
      boolean fenced = false;
      List<Job> claimed = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          fenced = rs.getLong(1) == 0;
          Array uids = rs.getArray(2);
          Array statuses = rs.getArray(3);
          if (written.isEmpty() && uids != null) {
            Object[] u = (Object[]) uids.getArray();
            Object[] st = (Object[]) statuses.getArray();
            for (int i = 0; i < u.length; i++) {
              written.put((UUID) u[i], JobStatus.fromDbValue((String) st[i]).orElseThrow());
            }
          }
          if (rs.getObject(4) != null) {
            claimed.add(JobRows.read(rs, 3));
          }
        }
      }
      return new CompleteAndClaim(written, fenced, inUidOrder(claimed));
    } catch (SQLException e) {
      throw new StoreException("JobCompleteAndClaimMany failed for kind " + claim.kind(), e);
    }
  }

  private int bindFence(PreparedStatement ps, int next, long epoch) throws SQLException {
    ps.setLong(next++, epoch);
    return next;
  }

  private static void bindClaim(PreparedStatement ps, int next, ClaimRequest claim)
      throws SQLException {
    ps.setObject(next++, JobRows.timestamp(claim.now()));
    ps.setObject(next++, JobRows.timestamp(claim.now()));
    ps.setLong(next++, claim.epoch());
    ps.setString(next++, claim.kind());
    ps.setString(next++, claim.shard());
    if (claim.after() != null) {
      ps.setInt(next++, -claim.after().priority());
      ps.setObject(next++, claim.after().uid());
    }
    ps.setInt(next, claim.limit());
  }

  /** Binds JobCompleteMany's parameters from {@code first}; returns the index of the next one. */
  private static int bindCompletions(
      Connection c,
      PreparedStatement ps,
      int first,
      Collection<Completion> completions,
      long epoch,
      Duration retention)
      throws SQLException {
    int n = completions.size();
    UUID[] uids = new UUID[n];
    String[] statuses = new String[n];
    String[] results = new String[n];
    String[] errors = new String[n];
    String[] startedAt = new String[n];
    String[] completedAt = new String[n];
    Long[] durations = new Long[n];
    Long[] bytesIn = new Long[n];
    Long[] bytesOut = new Long[n];
    Long[] items = new Long[n];
    Double[] fractions = new Double[n];
    Long[] progressItems = new Long[n];
    int i = 0;
    for (Completion done : completions) {
      if (done.lastProgress() != null) {
        fractions[i] = done.lastProgress().fraction();
        progressItems[i] = done.lastProgress().items();
      }
      uids[i] = done.uid();
      statuses[i] = done.status().dbValue();
      results[i] = JsonCodec.encode(done.result());
      errors[i] = done.error();
      startedAt[i] = done.startedAt().toString();
      completedAt[i] = done.completedAt().toString();
      durations[i] = done.durationMs();
      bytesIn[i] = done.stat("bytes_in");
      bytesOut[i] = done.stat("bytes_out");
      items[i] = done.stat("item_count");
      i++;
    }
    int next = first;
    ps.setLong(next++, retention.toSeconds());
    ps.setArray(next++, c.createArrayOf("uuid", uids));
    ps.setArray(next++, c.createArrayOf("text", statuses));
    ps.setArray(next++, c.createArrayOf("text", results));
    ps.setArray(next++, c.createArrayOf("text", errors));
    ps.setArray(next++, c.createArrayOf("timestamptz", startedAt));
    ps.setArray(next++, c.createArrayOf("timestamptz", completedAt));
    ps.setArray(next++, c.createArrayOf("bigint", durations));
    ps.setArray(next++, c.createArrayOf("bigint", bytesIn));
    ps.setArray(next++, c.createArrayOf("bigint", bytesOut));
    ps.setArray(next++, c.createArrayOf("bigint", items));
    ps.setArray(next++, c.createArrayOf("float8", fractions));
    ps.setArray(next++, c.createArrayOf("bigint", progressItems));
    ps.setLong(next++, epoch);
    return next;
  }

  /**
   * Recovers running rows of {@code kind} in {@code shard} that are not in {@code inFlight}: those
   * of {@code epoch} always, those of older epochs only when {@code olderToo}.
   *
   * @return how many went back to pending and how many failed
   */
  public RescueCounts rescueMany(
      String kind,
      String shard,
      Collection<UUID> inFlight,
      long epoch,
      boolean olderToo,
      int maxRetries,
      Duration retention,
      Instant now) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_RESCUE_MANY)) {
      int next = bindFence(ps, 1, epoch);
      ps.setInt(next++, maxRetries);
      ps.setObject(next++, JobRows.timestamp(now));
      ps.setLong(next++, retention.toSeconds());
      ps.setString(next++, kind);
      ps.setString(next++, shard);
      ps.setArray(next++, c.createArrayOf("uuid", inFlight.toArray(UUID[]::new)));
      ps.setLong(next++, epoch);
      ps.setLong(next++, epoch);
      ps.setBoolean(next, olderToo);
      int requeued = 0;
      int failed = 0;
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          if (JobStatus.PENDING.dbValue().equals(rs.getString(1))) {
            requeued++;
          } else {
            failed++;
          }
        }
      }
      return new RescueCounts(requeued, failed);
    } catch (SQLException e) {
      throw new StoreException("JobRescueMany failed for kind " + kind, e);
    }
  }

  /**
   * Puts jobs whose task failed because the database went away back to pending, counting a retry.
   *
   * @param errors each job's error, kept only should it fail for having used up its retries
   * @return the rows written and the status each got
   */
  public Map<UUID, JobStatus> retryMany(
      Map<UUID, String> errors, long epoch, int maxRetries, Duration retention, Instant now) {
    if (errors.isEmpty()) {
      return Map.of();
    }
    List<UUID> uids = new ArrayList<>(errors.keySet());
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_RETRY_MANY)) {
      ps.setArray(1, c.createArrayOf("uuid", uids.toArray(UUID[]::new)));
      ps.setArray(2, c.createArrayOf("text", uids.stream().map(errors::get).toArray()));
      ps.setInt(3, maxRetries);
      ps.setObject(4, JobRows.timestamp(now));
      ps.setLong(5, retention.toSeconds());
      ps.setLong(6, epoch);
      return statuses(ps);
    } catch (SQLException e) {
      throw new StoreException("JobRetryMany failed", e);
    }
  }

  /**
   * One failed attempt of a job whose failure the kind calls transient.
   *
   * @param uid the job
   * @param error what went wrong, as shown to callers
   * @param startedAt when the attempt began
   * @param endedAt when it ended
   * @param retryAt when the job is to be tried again, should it have attempts left
   */
  public record FailedAttempt(
      UUID uid, String error, Instant startedAt, Instant endedAt, Instant retryAt) {}

  /**
   * Writes failed attempts (JobFailAttemptMany): each job goes back to pending until {@code
   * retryAt} while it has attempts left under {@code maxAttempts}, or fails.
   *
   * @return the rows written and the status each got
   */
  public Map<UUID, JobStatus> failAttemptMany(
      Collection<FailedAttempt> attempts,
      long epoch,
      int maxAttempts,
      Duration retention,
      Instant now) {
    if (attempts.isEmpty()) {
      return Map.of();
    }
    List<FailedAttempt> all = new ArrayList<>(attempts);
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_FAIL_ATTEMPT_MANY)) {
      ps.setArray(1, c.createArrayOf("uuid", all.stream().map(FailedAttempt::uid).toArray()));
      ps.setArray(2, c.createArrayOf("text", all.stream().map(FailedAttempt::error).toArray()));
      ps.setArray(3, c.createArrayOf("text", texts(all, FailedAttempt::startedAt)));
      ps.setArray(4, c.createArrayOf("text", texts(all, FailedAttempt::endedAt)));
      ps.setArray(5, c.createArrayOf("text", texts(all, FailedAttempt::retryAt)));
      ps.setArray(
          6,
          c.createArrayOf(
              "bigint",
              all.stream()
                  .map(a -> Math.max(0, Duration.between(a.startedAt(), a.endedAt()).toMillis()))
                  .toArray()));
      ps.setInt(7, maxAttempts);
      ps.setObject(8, JobRows.timestamp(now));
      ps.setLong(9, retention.toSeconds());
      ps.setLong(10, epoch);
      return statuses(ps);
    } catch (SQLException e) {
      throw new StoreException("JobFailAttemptMany failed", e);
    }
  }

  private static Object[] texts(
      List<FailedAttempt> attempts, java.util.function.Function<FailedAttempt, Instant> field) {
    return attempts.stream().map(field).map(t -> t == null ? null : t.toString()).toArray();
  }

  /**
   * Stamps the rows of jobs this process still runs with {@code epoch}, the one it just took.
   *
   * <p>A row counts as still this process's when it runs under any epoch its task's row may carry:
   * the claim's, one adopted under since, or {@code epoch} itself, for an adoption that committed
   * but whose answer was lost. Only this process ever stamps those epochs.
   *
   * @param heldUnder each job and the epochs its row may carry while its task holds it
   */
  public Adopted adoptMany(Map<UUID, long[]> heldUnder, long epoch, Instant now) {
    if (heldUnder.isEmpty()) {
      return new Adopted(false, Set.of());
    }
    List<UUID> uids = new ArrayList<>();
    List<Long> epochs = new ArrayList<>();
    heldUnder.forEach(
        (uid, held) -> {
          for (long e : held) {
            uids.add(uid);
            epochs.add(e);
          }
          uids.add(uid);
          epochs.add(epoch);
        });
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_ADOPT_MANY)) {
      int next = bindFence(ps, 1, epoch);
      ps.setObject(next++, JobRows.timestamp(now));
      ps.setArray(next++, c.createArrayOf("uuid", uids.toArray(UUID[]::new)));
      ps.setArray(next, c.createArrayOf("bigint", epochs.toArray()));
      Set<UUID> adopted = uids(ps);
      return new Adopted(adopted.isEmpty() && !fenceHolds(c, epoch), adopted);
    } catch (SQLException e) {
      throw new StoreException("JobAdoptMany failed", e);
    }
  }

  /** Whether {@code epoch} is still the lock's newest. */
  private boolean fenceHolds(Connection c, long epoch) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT 1 FROM job_owner_epochs WHERE epoch = ?")) {
      bindFence(ps, 1, epoch);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  /** Writes reported progress of running jobs claimed under {@code epoch}; returns how many. */
  public int progressMany(Collection<ProgressReport> reports, long epoch, Instant now) {
    if (reports.isEmpty()) {
      return 0;
    }
    UUID[] uids = reports.stream().map(ProgressReport::uid).toArray(UUID[]::new);
    Double[] fractions = reports.stream().map(ProgressReport::fraction).toArray(Double[]::new);
    Long[] items = reports.stream().map(ProgressReport::items).toArray(Long[]::new);
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_PROGRESS_MANY)) {
      ps.setObject(1, JobRows.timestamp(now));
      ps.setArray(2, c.createArrayOf("uuid", uids));
      ps.setArray(3, c.createArrayOf("float8", fractions));
      ps.setArray(4, c.createArrayOf("bigint", items));
      ps.setLong(5, epoch);
      return ps.executeUpdate();
    } catch (SQLException e) {
      throw new StoreException("JobProgressMany failed", e);
    }
  }

  /**
   * Progress a running job reported.
   *
   * @param uid the job
   * @param fraction 0 to 1, or null when only items are known
   * @param items items done, or null
   */
  public record ProgressReport(UUID uid, Double fraction, Long items) {}

  /** Which of these running jobs a caller asked to stop. */
  public Set<UUID> cancelRequestedMany(Collection<UUID> running) {
    if (running.isEmpty()) {
      return Set.of();
    }
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_GET_CANCEL_REQUESTED_MANY)) {
      ps.setArray(1, c.createArrayOf("uuid", running.toArray(UUID[]::new)));
      return uids(ps);
    } catch (SQLException e) {
      throw new StoreException("JobGetCancelRequestedMany failed", e);
    }
  }

  /**
   * Puts jobs this owner stopped without an outcome back to pending (or fails those whose cancel
   * was requested).
   *
   * @return the rows written and the status each got
   */
  public Map<UUID, JobStatus> releaseMany(
      Collection<UUID> uids, long epoch, Duration retention, Instant now) {
    if (uids.isEmpty()) {
      return Map.of();
    }
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_RELEASE_MANY)) {
      ps.setObject(1, JobRows.timestamp(now));
      ps.setLong(2, retention.toSeconds());
      ps.setArray(3, c.createArrayOf("uuid", uids.toArray(UUID[]::new)));
      ps.setLong(4, epoch);
      return statuses(ps);
    } catch (SQLException e) {
      throw new StoreException("JobReleaseMany failed", e);
    }
  }

  /** Finished jobs of {@code kind} whose expiry has passed, at most {@code limit}. */
  public List<Job> expiredMany(String kind, Instant now, int limit) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_GET_EXPIRED_MANY)) {
      ps.setString(1, kind);
      ps.setObject(2, JobRows.timestamp(now));
      ps.setInt(3, limit);
      List<Job> expired = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          expired.add(JobRows.read(rs, 0));
        }
      }
      return expired;
    } catch (SQLException e) {
      throw new StoreException("JobGetExpiredMany failed for kind " + kind, e);
    }
  }

  /** Forgets the per-minute finished counts of {@code kind} from before {@code before}. */
  public void purgeFinishedMinutes(String kind, Instant before) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_PURGE_FINISHED_MINUTES)) {
      ps.setString(1, kind);
      ps.setObject(2, JobRows.timestamp(before));
      ps.executeUpdate();
    } catch (SQLException e) {
      throw new StoreException("JobPurgeFinishedMinutes failed", e);
    }
  }

  /**
   * JobActiveShards: every (kind, shard) that has a pending or running job. Pending jobs by a loose
   * scan of the claim index (one probe per shard, however long the queue); running ones are few
   * (bounded by the concurrency limits).
   */
  static final String JOB_ACTIVE_SHARDS =
      """
      WITH RECURSIVE pending AS (
        (SELECT kind, shard FROM jobs WHERE status = 'pending' ORDER BY kind, shard LIMIT 1)
        UNION ALL
        SELECT n.kind, n.shard FROM pending p,
               LATERAL (SELECT kind, shard FROM jobs
                         WHERE status = 'pending' AND (kind, shard) > (p.kind, p.shard)
                         ORDER BY kind, shard LIMIT 1) n)
      SELECT kind, shard FROM pending
      UNION
      SELECT DISTINCT kind, shard FROM jobs WHERE status = 'running'
      """;

  /** Every shard of every kind that has a pending or running job now, by kind. */
  public Map<String, Set<String>> activeShards() {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_ACTIVE_SHARDS);
        ResultSet rs = ps.executeQuery()) {
      Map<String, Set<String>> shards = new HashMap<>();
      while (rs.next()) {
        shards.computeIfAbsent(rs.getString(1), k -> new HashSet<>()).add(rs.getString(2));
      }
      return shards;
    } catch (SQLException e) {
      throw new StoreException("JobActiveShards failed", e);
    }
  }

  /** How many finished jobs of {@code kind} have expired by {@code now}. */
  public long countExpired(String kind, Instant now) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_COUNT_EXPIRED)) {
      ps.setString(1, kind);
      ps.setObject(2, JobRows.timestamp(now));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      throw new StoreException("JobCountExpired failed for kind " + kind, e);
    }
  }

  /** Deletes finished jobs; returns how many rows went. */
  public int deleteMany(Collection<UUID> uids) {
    return updateMany(JOB_DELETE_MANY, null, uids, "JobDeleteMany");
  }

  /** Moves the expiry of finished jobs to {@code until}. */
  public int deferExpiryMany(Collection<UUID> uids, Instant until) {
    return updateMany(JOB_DEFER_EXPIRY_MANY, until, uids, "JobDeferExpiryMany");
  }

  private int updateMany(String sql, Instant instant, Collection<UUID> uids, String name) {
    if (uids.isEmpty()) {
      return 0;
    }
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      int index = 1;
      if (instant != null) {
        ps.setObject(index++, JobRows.timestamp(instant));
      }
      Array array = c.createArrayOf("uuid", uids.toArray(UUID[]::new));
      ps.setArray(index, array);
      return ps.executeUpdate();
    } catch (SQLException e) {
      throw new StoreException(name + " failed", e);
    }
  }

  /** Runs a query whose columns are a uid and a status, and collects them. */
  private static Map<UUID, JobStatus> statuses(PreparedStatement ps) throws SQLException {
    Map<UUID, JobStatus> written = new HashMap<>();
    try (ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        written.put(
            rs.getObject(1, UUID.class), JobStatus.fromDbValue(rs.getString(2)).orElseThrow());
      }
    }
    return written;
  }

  /** Runs a query whose first column is a uid and collects them. */
  private static Set<UUID> uids(PreparedStatement ps) throws SQLException {
    Set<UUID> uids = new HashSet<>();
    try (ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        uids.add(rs.getObject(1, UUID.class));
      }
    }
    return uids;
  }

  /**
   * RETURNING has no order: the claim's order, priority (higher first), then uid. PostgreSQL orders
   * uuids as unsigned bytes, as their text does.
   */
  private static List<Job> inUidOrder(List<Job> jobs) {
    jobs.sort(Comparator.comparingInt((Job j) -> -j.priority).thenComparing(j -> j.uid.toString()));
    return jobs;
  }

  /**
   * The order the fair claim walks owner keys in: by their UTF-8 bytes, as {@link #OWNER_KEY}'s
   * {@code COLLATE "C"} compares them. {@link String#compareTo} compares UTF-16 units instead,
   * which puts an owner id with an emoji (U+1F600) before one with a fullwidth letter (U+FF5A).
   */
  private static final Comparator<String> OWNER_KEY_ORDER =
      (a, b) ->
          java.util.Arrays.compareUnsigned(
              a.getBytes(java.nio.charset.StandardCharsets.UTF_8),
              b.getBytes(java.nio.charset.StandardCharsets.UTF_8));

  /**
   * The fair claim's order: one job of each owner in turn, the owners in rotation order (those
   * after {@code cursor} first, then from the start), each owner's jobs in uid order.
   */
  static List<Job> inTurns(List<Job> jobs, String cursor) {
    Map<String, List<Job>> byOwner =
        new java.util.TreeMap<>(
            Comparator.comparing((String key) -> OWNER_KEY_ORDER.compare(key, cursor) <= 0)
                .thenComparing(OWNER_KEY_ORDER));
    for (Job job : inUidOrder(jobs)) {
      byOwner.computeIfAbsent(ownerKey(job), k -> new ArrayList<>()).add(job);
    }
    List<Job> turns = new ArrayList<>(jobs.size());
    for (int round = 0; turns.size() < jobs.size(); round++) {
      for (List<Job> owned : byOwner.values()) {
        if (round < owned.size()) {
          turns.add(owned.get(round));
        }
      }
    }
    return turns;
  }

  /** The owner of {@code job} as the fair claim's index writes it: {@code owner_kind:owner_id}. */
  public static String ownerKey(Job job) {
    return (job.ownerKind == null ? "" : job.ownerKind)
        + ":"
        + (job.ownerId == null ? "" : job.ownerId);
  }

  private static Instant instant(ResultSet rs, int column) throws SQLException {
    OffsetDateTime value = rs.getObject(column, OffsetDateTime.class);
    return value == null ? null : value.toInstant();
  }

  /**
   * What one claim did.
   *
   * @param fenced true when a newer epoch was taken: nothing was claimed, and this owner is
   *     superseded
   * @param jobs the jobs claimed, oldest first
   */
  public record Claimed(boolean fenced, List<Job> jobs) {}

  /**
   * What one adoption did.
   *
   * @param fenced true when a newer epoch was taken
   * @param adopted the jobs now stamped with the new epoch
   */
  public record Adopted(boolean fenced, Set<UUID> adopted) {}

  /**
   * What one JobCompleteAndClaimMany did.
   *
   * @param written the rows whose outcome was written, and the status each got
   * @param fenced true when a newer epoch was taken: nothing was claimed
   * @param claimed the jobs claimed, oldest first
   */
  public record CompleteAndClaim(Map<UUID, JobStatus> written, boolean fenced, List<Job> claimed) {}

  /**
   * What one rescue did.
   *
   * @param requeued rows put back to pending
   * @param failed rows failed for having used up their retries
   */
  public record RescueCounts(int requeued, int failed) {}

  /** A statement of the engine failed; its cause says whether the database went away. */
  public static final class StoreException extends IllegalStateException {
    StoreException(String message, SQLException cause) {
      super(message + ": " + cause.getMessage(), cause);
    }
  }
}
