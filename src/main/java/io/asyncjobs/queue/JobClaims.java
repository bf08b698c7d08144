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
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The claim's statements: a shard's due pending jobs become running under the owner's fencing
 * epoch, in priority order (JobClaimMany, from the head or after a cursor), under a running quota
 * per owner (JobClaimCapped) or in turns between owners (JobClaimFair); delayed jobs whose time has
 * come become due (JobReleaseDue); and, for the wake-up path, finished slots are written and filled
 * again in one statement (JobCompleteAndClaimMany, whose outcome half is {@link JobOutcomes}'s
 * JobCompleteMany). Each statement takes the current time as a parameter and claims many rows in
 * one round trip.
 */
@ApplicationScoped
public class JobClaims {

  /**
   * The claim itself: the due pending jobs of a kind in one shard after a cursor become running
   * under the fence's epoch, highest priority first, then oldest first. The rows come from
   * jobs_due_for_claim (V24), which walks the due-claim index in that order and locks them FOR
   * UPDATE SKIP LOCKED, so a concurrent claimer takes other rows instead of waiting; it is planned
   * with sorting disabled, so no statistics (a queue analysed while empty) can turn the walk into a
   * read and sort of every pending job of the kind. The cursor is the last job (negated priority,
   * uid) this owner already claimed; within a burst the head of the queue is a run of rows that
   * just stopped being pending, and starting after the cursor skips it in one index descent. Jobs
   * that sort before the cursor (recovered orphans, retries, a higher priority than the cursor's)
   * are left to a claim from the head ({@link #HEAD}), as the tick's is. The walk
   * (jobs_due_for_claim_tids, V27) returns the locked rows' addresses; none reach the update unless
   * the fence let the claim in. The update (jobs_start_tids, V27) reads the rows at those addresses
   * and nothing else, whatever the planner knew of the table's size when it planned: in this
   * statement, under a plan made while the table was empty, it read the whole table to find them.
   */
  private static final String CLAIM =
      """
      claimed AS (
        SELECT %s
          FROM jobs_start_tids(ARRAY(SELECT d FROM jobs_due_for_claim_tids(?, ?, ?::smallint,
                                                                           ?::uuid, ?) d
                                      WHERE EXISTS (SELECT 1 FROM fence)), ?, ?))"""
          .formatted(JobRows.COLUMNS);

  /** The cursor before every job in the claim's order: a claim from the head of the queue. */
  public static final ClaimCursor HEAD = ClaimCursor.before(JobPriority.MAX + 1);

  /**
   * JobClaimMany: claims, in one statement, and says whether the fence let it (first column: 1, or
   * 0 when a newer epoch was taken); each row carries one claimed job (all null when none was).
   */
  static final String JOB_CLAIM_MANY =
      "WITH "
          + Fence.CTE
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
          + Fence.CTE
          + ", p AS (SELECT ?::text AS kind, ?::text AS shard, ?::int AS room, ?::int AS cap),"
          + RUNNING_AND_CAPPED
          + ", claimed AS (SELECT "
          + JobRows.COLUMNS
          + " FROM jobs_start_tids(ARRAY(SELECT w.ctid FROM (SELECT c.ctid, c.uid, c.np,"
          + "   row_number() OVER (PARTITION BY c.ok ORDER BY c.np, c.uid)"
          + "   + COALESCE((SELECT r.n FROM running r WHERE r.ok = c.ok), 0) AS load"
          + "   FROM (SELECT ctid, uid, (-priority) AS np, "
          + OWNER_KEY
          + " AS ok FROM jobs WHERE kind = (SELECT kind FROM p) AND shard = (SELECT shard FROM p)"
          + "   AND status = 'pending' AND delayed_until IS NULL AND EXISTS (SELECT 1 FROM fence)"
          + "   AND "
          + OWNER_KEY
          + " NOT IN (SELECT ok FROM capped)"
          + "   ORDER BY (-priority), uid LIMIT (SELECT room FROM p) FOR UPDATE SKIP LOCKED) c) w"
          + "   WHERE w.load <= (SELECT cap FROM p)), ?, ?))"
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
          + Fence.CTE
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
          + " picks AS (SELECT j.ctid, o.pos, j.rn FROM owners o, LATERAL (SELECT ctid, uid,"
          + "   row_number() OVER (ORDER BY uid) AS rn FROM jobs WHERE "
          + FAIR_ROWS
          + " AND "
          + OWNER_KEY
          + " = o.ok ORDER BY uid LIMIT LEAST((SELECT each FROM share), CASE WHEN"
          + "   (SELECT cap FROM p) > 0 THEN (SELECT cap FROM p) - COALESCE((SELECT r.n FROM"
          + "   running r WHERE r.ok = o.ok), 0) ELSE 2147483647 END)) j),"
          + " claimed AS (SELECT "
          + JobRows.COLUMNS
          + " FROM jobs_start_tids(ARRAY(SELECT l FROM jobs_lock_pending_tids(ARRAY(SELECT ctid"
          + "   FROM picks"
          + "   ORDER BY rn, pos LIMIT (SELECT room FROM p))) l WHERE EXISTS (SELECT 1 FROM fence)),"
          + "   ?, ?))"
          + " SELECT (SELECT count(*) FROM fence) AS fenced_in, k.*"
          + " FROM (SELECT 1) AS one LEFT JOIN claimed AS k ON true";

  /**
   * JobCompleteAndClaimMany: JobCompleteMany and JobClaimMany in one statement, for the wake-up
   * path: one round trip and one commit hand back finished slots and fill them again. The two
   * updates touch disjoint rows (running and pending). Columns: whether the fence let the claim in,
   * the uids written and the statuses written (arrays, in the same order, on the first row only:
   * repeated on every row they made the answer grow with the square of the batch), then one claimed
   * job per row and its place among them.
   */
  private static final String JOB_COMPLETE_AND_CLAIM_MANY =
      "WITH "
          + Fence.CTE
          + ", completed AS ("
          + JobOutcomes.COMPLETE
          + "), "
          + CLAIM
          + " SELECT (SELECT count(*) FROM fence) AS fenced_in,"
          + " CASE WHEN k.nth IS NULL OR k.nth = 1"
          + " THEN (SELECT array_agg(uid) FROM completed) END AS completed,"
          + " CASE WHEN k.nth IS NULL OR k.nth = 1"
          + " THEN (SELECT array_agg(status) FROM completed) END AS statuses, k.*"
          + " FROM (SELECT 1) AS one"
          + " LEFT JOIN (SELECT claimed.*, row_number() OVER () AS nth FROM claimed) AS k ON true";

  /**
   * JobReleaseDue: the shard's delayed pending jobs whose time has come become due (claimable),
   * under the fence; answers how many, and the earliest due time still ahead (null: none). Both
   * read the delayed index, never the queue.
   */
  static final String JOB_RELEASE_DUE =
      "WITH "
          + Fence.CTE
          + ", released AS (UPDATE jobs SET delayed_until = NULL WHERE kind = ? AND shard = ?"
          + "   AND status = 'pending' AND delayed_until IS NOT NULL AND delayed_until <= ?"
          + "   AND EXISTS (SELECT 1 FROM fence) RETURNING 1)"
          + " SELECT (SELECT count(*) FROM released),"
          + " (SELECT min(delayed_until) FROM jobs WHERE kind = ? AND shard = ?"
          + "   AND status = 'pending' AND delayed_until IS NOT NULL AND delayed_until > ?)";

  private final AgroalDataSource dataSource;

  JobClaims(AgroalDataSource dataSource) {
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
        PreparedStatement ps = c.prepareStatement(JOB_CLAIM_MANY)) {
      int next = Fence.bind(ps, 1, claim.epoch());
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
      int next = Fence.bind(ps, 1, claim.epoch());
      ps.setString(next++, claim.kind());
      ps.setString(next++, claim.shard());
      ps.setInt(next++, claim.limit());
      ps.setInt(next++, runningCap);
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
      int next = Fence.bind(ps, 1, claim.epoch());
      ps.setString(next++, claim.kind());
      ps.setString(next++, claim.shard());
      ps.setString(next++, claim.afterOwner());
      ps.setInt(next++, claim.limit());
      ps.setInt(next++, claim.runningCap());
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
        return new Released(rs.getInt(1), JobRows.instant(rs, 2));
      }
    } catch (SQLException e) {
      throw new StoreException("JobReleaseDue failed for kind " + kind, e);
    }
  }

  /**
   * Writes finished tasks' outcomes under the claim's epoch and claims what {@code claim} asks for,
   * in one statement.
   */
  public CompleteAndClaim completeAndClaimMany(
      Collection<Completion> completions, Duration retention, ClaimRequest claim) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(JOB_COMPLETE_AND_CLAIM_MANY)) {
      int next = Fence.bind(ps, 1, claim.epoch());
      next = JobOutcomes.bindCompletions(c, ps, next, completions, claim.epoch(), retention);
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

  private static void bindClaim(PreparedStatement ps, int next, ClaimRequest claim)
      throws SQLException {
    ps.setString(next++, claim.kind());
    ps.setString(next++, claim.shard());
    ClaimCursor after = claim.after() == null ? HEAD : claim.after();
    ps.setInt(next++, -after.priority());
    ps.setObject(next++, after.uid());
    ps.setInt(next++, claim.limit());
    ps.setObject(next++, JobRows.timestamp(claim.now()));
    ps.setLong(next, claim.epoch());
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

  /**
   * What one claim did.
   *
   * @param fenced true when a newer epoch was taken: nothing was claimed, and this owner is
   *     superseded
   * @param jobs the jobs claimed, oldest first
   */
  public record Claimed(boolean fenced, List<Job> jobs) {}

  /**
   * What one JobCompleteAndClaimMany did.
   *
   * @param written the rows whose outcome was written, and the status each got
   * @param fenced true when a newer epoch was taken: nothing was claimed
   * @param claimed the jobs claimed, oldest first
   */
  public record CompleteAndClaim(Map<UUID, JobStatus> written, boolean fenced, List<Job> claimed) {}
}
