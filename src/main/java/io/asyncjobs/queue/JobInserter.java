package io.asyncjobs.queue;

import io.agroal.api.AgroalDataSource;
import io.asyncjobs.channels.Notifier;
import io.asyncjobs.config.Shards;
import io.asyncjobs.settings.SettingsStore;
import io.asyncjobs.time.Clock;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Event;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import org.jboss.logging.Logger;

/**
 * Adds new jobs: checks a list of {@link EnqueueRequest}s of one kind and owner, inserts them in
 * one statement under the owner's quota ({@link QuotaAdmission}), answers a key used before with
 * the job that holds it, and wakes the owner. Every way in ({@link JobQueue}'s single, idempotent
 * and list enqueues, and through them the API's routes) ends here. A list of one is inserted with a
 * one-row statement, lighter than the unnest form a longer list takes.
 */
@ApplicationScoped
public class JobInserter {

  private static final Logger LOG = Logger.getLogger(JobInserter.class);

  /** The most jobs one enqueue takes. */
  public static final int MAX_JOBS = 10_000;

  private static final Pattern KIND = Pattern.compile("[a-z][a-z0-9_]{0,39}");
  private static final int MAX_NAME_LENGTH = 255;
  private static final int MAX_OWNER_LENGTH = 200;
  private static final int MAX_KEY_LENGTH = 200;

  /**
   * Wakes the owner, but only when it may be idle ({@link #mayBeIdle}). When it is busy with the
   * kind, it claims more as its tasks finish, so a notification would only add a global lock and a
   * signal per commit under load. The scheduled tick covers the rare race between this check and
   * the owner's claim. Its one parameter is {@link #mayBeIdle}'s.
   */
  private static final String NOTIFY_IF_OWNER_MAY_BE_IDLE =
      " SELECT pg_notify('"
          + JobQueue.ENQUEUED_CHANNEL
          + "', "
          + JobQueue.wakePayload("i")
          + headIfAbove("i.top")
          + ") FROM (SELECT kind, shard, owner_kind, owner_id, max(priority) AS top FROM inserted"
          + "   GROUP BY kind, shard, owner_kind, owner_id) i"
          + " WHERE i.top > "
          + JobPriority.DEFAULT
          + " OR "
          + mayBeIdle("i");

  /**
   * Whether the owner of the shard of the new jobs {@code alias} (kind, shard, owner_kind,
   * owner_id) may be idle, read before they were inserted: no older due job of the kind waits in
   * the shard. Under a running quota per owner ({@code max-running-per-owner}) due jobs also wait
   * while their owners are at the quota and threads sit idle, so there only a due job of the new
   * jobs' own owner says they would wait anyway (a job without an owner always wakes). The quota is
   * the kind's in force: the stored override, else the configured value, the one parameter. CASE
   * runs only the probe it picks: the shard's due index, or the owner's pending index.
   *
   * <p>Each probe is a scalar subquery with LIMIT 1, not a NOT EXISTS: the planner may turn a
   * correlated NOT EXISTS into a hashed subplan that reads every due job of every kind, and picks
   * it when the statistics say few jobs wait (a queue empty at its last ANALYZE). Each pooled
   * session keeps that plan until the next ANALYZE, so every enqueue read the whole backlog. A
   * scalar subquery is never hashed, and without an ORDER BY it stops at the first due row of
   * whichever index the planner picks; an ORDER BY of its own would let a plan read and sort every
   * due job of the kind instead.
   */
  static String mayBeIdle(String alias) {
    return "CASE WHEN COALESCE((SELECT s.max_running_per_owner FROM service_settings s"
        + " WHERE s.service = "
        + alias
        + ".kind), ?::int) = 0"
        + " THEN "
        + idleProbe(alias, false)
        + " ELSE "
        + idleProbe(alias, true)
        + " END";
  }

  /**
   * Whether no due job of the kind of row {@code alias} waits in its shard (with {@code byOwner},
   * none of its owner's, which is what a running quota per owner makes the question): a lookup that
   * stops at the first due row, never the backlog.
   */
  private static String idleProbe(String alias, boolean byOwner) {
    String owner =
        byOwner
            ? " AND p.owner_kind = " + alias + ".owner_kind AND p.owner_id = " + alias + ".owner_id"
            : "";
    return "(SELECT true FROM jobs p WHERE p.kind = "
        + alias
        + ".kind AND p.shard = "
        + alias
        + ".shard AND p.status = 'pending' AND p.delayed_until IS NULL"
        + owner
        + " LIMIT 1) IS NULL";
  }

  /**
   * A job above the default priority may sort before the owner's claim cursor, and must not wait
   * behind a busy queue: its wake-up is sent whatever the queue holds and asks for the head.
   */
  private static String headIfAbove(String priority) {
    return " || CASE WHEN "
        + priority
        + " > "
        + JobPriority.DEFAULT
        + " THEN '"
        + JobQueue.FROM_HEAD
        + "' ELSE '' END";
  }

  /**
   * JobInsertOneWokenHere: adds one pending job and asks nothing more, for a job whose shard this
   * replica owns ({@link LocalWakeUps}): its runner is woken in process after the commit, so no
   * owner needs a notification. Without JobInsertOne's RETURNING and the subplans in it, an enqueue
   * one at a time took about a tenth less time (engine suite's enqueue mode, 2026-12-07).
   */
  static final String JOB_INSERT_ONE_WOKEN_HERE =
      "INSERT INTO jobs AS j (uid, kind, status, owner_kind, owner_id, preferred_name, payload,"
          + "                   created_at, updated_at, expires_at, shard, priority, run_after,"
          + "                   delayed_until, callback_url, traceparent)"
          + " VALUES (?, ?, 'pending', ?, ?, ?, ?::jsonb, ?, ?, "
          + SettingsStore.EFFECTIVE_RETENTION_END
          + ", ?, ?, ?, ?, ?, ?)";

  /**
   * JobInsertOneStarted: adds one job on the replica that owns its shard and holds a thread for it
   * ({@link LocalStarts}). The job starts in the insert's own commit, written running under the
   * owner's epoch (one commit from enqueue to start, where a claim would take a second), when the
   * fence lets it (the epoch is still the lock's newest, held FOR SHARE as a claim holds it) and no
   * due job of the shard waits before it; otherwise it is written pending, as JobInsertOneWokenHere
   * writes it. Returns whether the fence let it (1, or 0 when a newer epoch was taken), then the
   * row as written ({@link JobRows#COLUMNS}). Its parameters are JobInsertOneWokenHere's, then the
   * epoch, the start time and the epoch again.
   */
  static final String JOB_INSERT_ONE_STARTED =
      "WITH v (uid, kind, owner_kind, owner_id, preferred_name, payload, created_at, updated_at,"
          + "        expires_at, shard, priority, run_after, delayed_until, callback_url,"
          + "        traceparent) AS ("
          + "   VALUES (?::uuid, ?::text, ?::text, ?::text, ?::text, ?::jsonb, ?::timestamptz,"
          + "           ?::timestamptz, "
          + SettingsStore.EFFECTIVE_RETENTION_END
          + ", ?::text, ?::smallint, ?::timestamptz, ?::timestamptz, ?::text, ?::text)),"
          + " "
          + Fence.CTE
          + ", s AS (SELECT EXISTS (SELECT 1 FROM fence)"
          + "   AND (SELECT true FROM jobs p WHERE p.kind = (SELECT kind FROM v)"
          + "     AND p.shard = (SELECT shard FROM v) AND p.status = 'pending'"
          + "     AND p.delayed_until IS NULL LIMIT 1) IS NULL"
          + "   AND (SELECT delayed_until FROM v) IS NULL AS go,"
          + "   ?::timestamptz AS at, ?::bigint AS epoch)"
          + " INSERT INTO jobs (uid, kind, owner_kind, owner_id, preferred_name, payload, created_at,"
          + "                   updated_at, expires_at, shard, priority, run_after, delayed_until,"
          + "                   callback_url, traceparent, status, started_at, epoch)"
          + " SELECT v.*, CASE WHEN s.go THEN 'running' ELSE 'pending' END,"
          + "        CASE WHEN s.go THEN s.at END, CASE WHEN s.go THEN s.epoch END"
          + "   FROM v, s"
          + " RETURNING (SELECT count(*) FROM fence) AS fenced_in, "
          + JobRows.COLUMNS;

  /**
   * JobInsertOne: JobInsertOneWokenHere, and, when the job's owner may be idle ({@link
   * #mayBeIdle}), notifies it in the same round trip. One row needs neither the CTE nor the
   * grouping of JobInsertMany: the probe runs in RETURNING, which reads the statement's snapshot
   * and so does not see the new row (about 5% less time per statement than the CTE's form, pgbench
   * 2026-12-06). Its last parameter is {@link #mayBeIdle}'s.
   */
  static final String JOB_INSERT_ONE =
      JOB_INSERT_ONE_WOKEN_HERE
          + " RETURNING CASE WHEN j.priority > "
          + JobPriority.DEFAULT
          + " OR "
          + mayBeIdle("j")
          + " THEN pg_notify('"
          + JobQueue.ENQUEUED_CHANNEL
          + "', "
          + JobQueue.wakePayload("j")
          + headIfAbove("j.priority")
          + ") END";

  /**
   * JobInsertIdempotent: JobInsertOne with an idempotency key; returns the new uid, or no row when
   * the owner already used the key (then the first job stands). The notification is sent only for a
   * row actually inserted, and only when the owner may be idle, as for JobInsertOne.
   */
  private static final String JOB_INSERT_IDEMPOTENT =
      "WITH inserted AS ("
          + " INSERT INTO jobs (uid, kind, status, owner_kind, owner_id, preferred_name, payload,"
          + "                   created_at, updated_at, expires_at, shard, idempotency_key,"
          + "                   priority, run_after, delayed_until, callback_url, traceparent)"
          + " VALUES (?, ?, 'pending', ?, ?, ?, ?::jsonb, ?, ?, "
          + SettingsStore.EFFECTIVE_RETENTION_END
          + ", ?, ?, ?, ?, ?, ?, ?)"
          + " ON CONFLICT (owner_kind, owner_id, idempotency_key)"
          + "   WHERE idempotency_key IS NOT NULL DO NOTHING"
          + " RETURNING uid, kind, shard, owner_kind, owner_id, priority)"
          + " SELECT i.uid, CASE WHEN i.priority > "
          + JobPriority.DEFAULT
          + " OR "
          + mayBeIdle("i")
          + "   THEN pg_notify('"
          + JobQueue.ENQUEUED_CHANNEL
          + "', "
          + JobQueue.wakePayload("i")
          + headIfAbove("i.priority")
          + ") END FROM inserted i";

  /** TxId: the current transaction's id, asked inside a shared commit before it commits. */
  private static final String TX_ID = "SELECT txid_current()";

  /**
   * TxStatus: whether a transaction whose commit failed on a lost connection is committed, aborted
   * or in progress (null once it is too old to know, which a just-failed commit never is).
   */
  private static final String TX_STATUS = "SELECT txid_status(?)";

  /** JobInsertMany: adds pending jobs in array order, then notifies as JobInsertOne does. */
  static final String JOB_INSERT_MANY =
      "WITH inserted AS ("
          + " INSERT INTO jobs (uid, kind, status, owner_kind, owner_id, preferred_name, payload,"
          + "                   created_at, updated_at, expires_at, shard, priority, run_after,"
          + "                   delayed_until, callback_url, traceparent)"
          + " SELECT n.uid, ?, 'pending', ?, ?, n.preferred_name, n.payload::jsonb, ?, ?, "
          + SettingsStore.EFFECTIVE_RETENTION_END
          + "      , n.shard, n.priority, n.run_after, n.delayed_until, n.callback_url,"
          + "        n.traceparent"
          + "   FROM unnest(?::uuid[], ?::text[], ?::text[], ?::text[], ?::smallint[],"
          + "               ?::timestamptz[], ?::timestamptz[], ?::text[], ?::text[])"
          + "        WITH ORDINALITY"
          + "        AS n(uid, payload, preferred_name, shard, priority, run_after, delayed_until,"
          + "             callback_url, traceparent, ord)"
          + "  ORDER BY n.ord"
          + " RETURNING kind, shard, owner_kind, owner_id, priority)"
          + NOTIFY_IF_OWNER_MAY_BE_IDLE;

  /**
   * JobInsertBatch: adds pending jobs in array order, each with its idempotency key or none, and
   * skips those whose key the owner already used; returns the uids inserted. Notifies as
   * JobInsertOne does when something was inserted while the owner may be idle (the {@code notified}
   * CTE runs because the final SELECT reads it).
   */
  private static final String JOB_INSERT_BATCH =
      """
      WITH inserted AS (
        INSERT INTO jobs (uid, kind, status, owner_kind, owner_id, preferred_name, payload,
                          created_at, updated_at, expires_at, idempotency_key, shard, priority,
                          run_after, delayed_until, callback_url, traceparent)
        SELECT n.uid, ?, 'pending', ?, ?, n.preferred_name, n.payload::jsonb, ?, ?,\s"""
          + SettingsStore.EFFECTIVE_RETENTION_END
          + """
      , n.idempotency_key, n.shard, n.priority, n.run_after, n.delayed_until, n.callback_url,
             n.traceparent
          FROM unnest(?::uuid[], ?::text[], ?::text[], ?::text[], ?::text[], ?::smallint[],
                      ?::timestamptz[], ?::timestamptz[], ?::text[], ?::text[])
               WITH ORDINALITY AS n(uid, payload, preferred_name, idempotency_key, shard, priority,
                                    run_after, delayed_until, callback_url, traceparent, ord)
         ORDER BY n.ord
        ON CONFLICT (owner_kind, owner_id, idempotency_key)
           WHERE idempotency_key IS NOT NULL DO NOTHING
        RETURNING uid, kind, shard, owner_kind, owner_id, priority),
      notified AS (
        SELECT pg_notify('"""
          + JobQueue.ENQUEUED_CHANNEL
          + "', "
          + JobQueue.wakePayload("i")
          + headIfAbove("i.top")
          + """
      ) FROM (SELECT kind, shard, owner_kind, owner_id, max(priority) AS top FROM inserted
               GROUP BY kind, shard, owner_kind, owner_id) i
         WHERE i.top >\s"""
          + JobPriority.DEFAULT
          + " OR "
          + mayBeIdle("i")
          + """
      )
      SELECT uid, (SELECT count(*) FROM notified) FROM inserted
      """;

  /**
   * JobGetReplays: for each idempotency key of an enqueue that was already used, the job that holds
   * it, its status, and whether it is the same request (same kind, and a payload equal as JSON:
   * jsonb compares numbers by value and ignores key order).
   */
  private static final String JOB_GET_REPLAYS =
      """
      SELECT n.ord, j.uid, j.status, (j.kind = ? AND j.payload = n.payload::jsonb)
        FROM unnest(?::text[], ?::text[]) WITH ORDINALITY AS n(idempotency_key, payload, ord)
        JOIN jobs j
          ON j.owner_kind = ? AND j.owner_id = ? AND j.idempotency_key = n.idempotency_key
      """;

  private final SettingsStore settings;
  private final Clock clock;
  private final AgroalDataSource dataSource;
  private final Event<JobsEnqueued> enqueued;
  private final QueueMetrics metrics;
  private final Shards shards;
  private final QuotaAdmission quota;
  private final LocalWakeUps wakeUps;
  private final LocalStarts starts;
  private final Notifier notifier;

  /** Reads back a row whose starting insert lost its answer ({@link #writtenAfterAll}). */
  private final JobReads reads;

  /**
   * Single enqueues without a key or a pending quota, sharing a commit when they arrive together:
   * the HTTP route's many callers at once cost the database one transaction per flush, not one per
   * job. A caller alone runs JobInsertOne as before, at the cost of a lock.
   */
  private final SharedCommit<EnqueueRequest, Enqueued> singles =
      new SharedCommit<>(this::insertTogether, SHARED_FLUSHES, SHARED_MAX_JOBS);

  /**
   * Flushes of single enqueues in flight at once. Two let two callers run side by side as they did
   * before commits were shared; a third caller arriving meanwhile waits for one of them and then
   * shares the next commit with every caller that piled up behind it.
   */
  static final int SHARED_FLUSHES = 2;

  /** The most single enqueues one shared commit takes. */
  static final int SHARED_MAX_JOBS = 1_000;

  public JobInserter(
      SettingsStore settings,
      Clock clock,
      AgroalDataSource dataSource,
      Event<JobsEnqueued> enqueued,
      QueueMetrics metrics,
      Shards shards,
      QuotaAdmission quota,
      LocalWakeUps wakeUps,
      LocalStarts starts,
      Notifier notifier) {
    this.settings = settings;
    this.clock = clock;
    this.dataSource = dataSource;
    this.enqueued = enqueued;
    this.metrics = metrics;
    this.shards = shards;
    this.quota = quota;
    this.wakeUps = wakeUps;
    this.starts = starts;
    this.notifier = notifier;
    this.reads = new JobReads(clock, dataSource);
  }

  /**
   * Adds up to {@value #MAX_JOBS} jobs of one kind and owner in one transaction, in list order:
   * pending, or running when a single job starts at once on the replica that owns its shard ({@link
   * LocalStarts}). Each row expires one retention period after enqueue; the owner restarts that
   * period when the job finishes, and never sweeps a job that is still pending or running. A
   * request whose idempotency key the owner used before for the same request is not added again:
   * its outcome names the first job. Unless the requests are exempt, the owner's pending quota
   * holds for the jobs the call adds, together.
   *
   * @param jobs the requests; they share their kind, owner and quota exemption, and their keys
   *     differ
   * @return one outcome per request, in list order
   * @throws IllegalArgumentException when a request is malformed; nothing is added then
   * @throws KeyReusedException when a key was used before for a different request; nothing is added
   *     then
   * @throws QuotaExceededException when the jobs would take the owner over its pending quota;
   *     nothing is added then
   */
  public List<Enqueued> enqueue(List<EnqueueRequest> jobs) {
    if (jobs.isEmpty() || jobs.size() > MAX_JOBS) {
      throw new IllegalArgumentException("a batch holds 1 to " + MAX_JOBS + " jobs");
    }
    EnqueueRequest head = jobs.get(0);
    requireKindAndOwner(head.kind(), head.owner());
    if (jobs.size() == 1) {
      requireJob(head);
      if (head.idempotencyKey() != null) {
        return List.of(insertKeyed(head));
      }
      if (quota.limit(head.kind(), head.owner(), head.quotaExempt()) <= 0) {
        return List.of(singles.run(head));
      }
      return List.of(insertOne(head));
    }
    Rows rows = new Rows(head, jobs);
    return rows.keyed ? insertBatch(head, rows) : insertMany(head, rows);
  }

  /**
   * Adds one job without a key, committed on its own. When the job is due and outside a pending
   * quota, it may start here ({@link #insertStartingHere}); otherwise JobInsertOneWokenHere when
   * this replica wakes the shard's owner itself, else JobInsertOne.
   */
  private Enqueued insertOne(EnqueueRequest job) {
    UUID uid = JobIds.next();
    String shard = shards.shardOf(job.kind(), uid);
    boolean wokenHere = wakeUps.wakesHere(job.kind(), shard);
    // A job under a pending quota is counted pending, and a delayed one cannot start: neither asks.
    boolean mayStart =
        quota.limit(job.kind(), job.owner(), job.quotaExempt()) <= 0
            && delayedUntil(job.runAfter(), clock.now()) == null;
    Enqueued outcome;
    try {
      outcome =
          mayStart
              ? insertStartingHere(job, uid, shard, wokenHere)
              : admitted(
                  job, false, c -> insertPending(c, job, uid, shard, wokenHere), added -> true);
    } catch (SQLException e) {
      throw failed(job.kind(), 1, e);
    }
    if (outcome.status() == JobStatus.RUNNING) {
      metrics.enqueued(job.kind(), 1); // written running by this replica's runner: nobody to wake
      return outcome;
    }
    boolean fromHead = job.priority() > JobPriority.DEFAULT;
    if (wokenHere && !wakeUps.wakesHere(job.kind(), shard)) {
      // The lock left this replica while the job went in: its new owner, which may be idle, is
      // told as JobInsertOne would have told it.
      notifyOwner(job.kind(), shard, fromHead);
    }
    added(job.kind(), 1, shard, fromHead);
    return outcome;
  }

  /**
   * Adds one job, outside any transaction (no pending quota binds it), on a connection of its own.
   * When this replica holds a free thread of the shard's runner for it ({@link LocalStarts}, asked
   * once the connection is in hand, so that the shard's run is never held while the pool is waited
   * for), JobInsertOneStarted, and a job it wrote running under the reservation's epoch starts on
   * that thread before the reservation is let go; otherwise {@link #insertPending}.
   */
  private Enqueued insertStartingHere(EnqueueRequest job, UUID uid, String shard, boolean wokenHere)
      throws SQLException {
    try (Connection c = dataSource.getConnection();
        LocalStarts.Reservation held = starts.reserve(job.kind(), shard)) {
      if (held == null) {
        return insertPending(c, job, uid, shard, wokenHere);
      }
      Job written;
      try {
        written = insertStarted(c, uid, shard, job, held);
      } catch (SQLException e) {
        written = writtenAfterAll(uid, e);
      }
      if (written.status == JobStatus.RUNNING && Objects.equals(written.epoch, held.epoch())) {
        try {
          held.started(written);
        } catch (RuntimeException e) {
          // The row is the owner's orphan, which its next tick puts back to pending: it is in.
          LOG.warnf(
              e, "enqueue of %s: job %s went in running but did not start here", job.kind(), uid);
        }
      }
      return new Enqueued(uid, true, written.status);
    }
  }

  /** Runs JobInsertOneWokenHere or JobInsertOne for one job on {@code c}. */
  private Enqueued insertPending(
      Connection c, EnqueueRequest job, UUID uid, String shard, boolean wokenHere)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(wokenHere ? JOB_INSERT_ONE_WOKEN_HERE : JOB_INSERT_ONE)) {
      bindNewJob(ps, uid, shard, job, JsonCodec.encode(job.payload()));
      bindOneTail(ps, job);
      if (!wokenHere) {
        ps.setInt(18, runningQuota(job.kind()));
      }
      ps.execute();
      return new Enqueued(uid, true, JobStatus.PENDING);
    }
  }

  /**
   * The row a starting insert wrote although its answer did not come ({@code error}: the connection
   * dropped, say, after the commit), read on another connection while the reservation still holds
   * the shard's run, so that nothing else has touched it: running under the reservation's epoch, it
   * starts here as if the answer had come; pending, it waits like any job. When the row is not
   * there, or cannot be read, {@code error} is thrown (a row that did commit running is then the
   * owner's orphan, which its next tick puts back to pending).
   */
  private Job writtenAfterAll(UUID uid, SQLException error) throws SQLException {
    Optional<Job> written;
    try {
      written = reads.getJob(uid);
    } catch (RuntimeException e) {
      error.addSuppressed(e);
      throw error;
    }
    if (written.isEmpty()) {
      throw error;
    }
    LOG.debugf(
        error, "enqueue of job %s: its answer was lost, the row is %s", uid, written.get().status);
    return written.get();
  }

  /** Binds JobInsertOneWokenHere's parameters after {@link #bindNewJob}'s: 13 to 17. */
  private void bindOneTail(PreparedStatement ps, EnqueueRequest job) throws SQLException {
    ps.setInt(13, job.priority());
    bindRunAfter(ps, 14, job.runAfter());
    ps.setString(16, job.callbackUrl());
    ps.setString(17, job.traceparent());
  }

  /**
   * Runs JobInsertOneStarted under the reservation's epoch and returns the row as written; a fenced
   * insert tells the reservation that a newer owner took the shard.
   */
  private Job insertStarted(
      Connection c, UUID uid, String shard, EnqueueRequest job, LocalStarts.Reservation held)
      throws SQLException {
    long epoch = held.epoch();
    try (PreparedStatement ps = c.prepareStatement(JOB_INSERT_ONE_STARTED)) {
      bindNewJob(ps, uid, shard, job, JsonCodec.encode(job.payload()));
      bindOneTail(ps, job);
      ps.setLong(18, epoch);
      ps.setObject(19, JobRows.timestamp(clock.now()));
      ps.setLong(20, epoch);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        if (rs.getInt(1) == 0) {
          held.fenced();
        }
        return JobRows.read(rs, 1);
      }
    }
  }

  /**
   * Wakes the owner of {@code shard} elsewhere for a job already committed. A failure is only
   * logged: the job is in, and the owner finds it at its next claim or tick.
   */
  private void notifyOwner(String kind, String shard, boolean fromHead) {
    try {
      notifier.send(JobQueue.ENQUEUED_CHANNEL, JobQueue.wakeUpPayload(kind, shard, fromHead));
    } catch (SQLException | RuntimeException e) {
      LOG.debugf(e, "enqueue of %s: the shard's new owner was not notified", kind);
    }
  }

  /**
   * Adds one job with a key (JobInsertIdempotent) unless the owner used the key before; then
   * answers the job that holds it (JobGetReplays). Committed on its own.
   */
  private Enqueued insertKeyed(EnqueueRequest job) {
    String payload = JsonCodec.encode(job.payload());
    // Two tries: the first job may be swept between the insert and the lookup, freeing the key.
    for (int attempt = 0; attempt < 2; attempt++) {
      UUID uid = JobIds.next();
      String shard = shards.shardOf(job.kind(), uid);
      Enqueued outcome;
      try {
        outcome =
            admitted(
                job,
                false,
                c -> {
                  try (PreparedStatement ps = c.prepareStatement(JOB_INSERT_IDEMPOTENT)) {
                    bindNewJob(ps, uid, shard, job, payload);
                    ps.setString(13, job.idempotencyKey());
                    ps.setInt(14, job.priority());
                    bindRunAfter(ps, 15, job.runAfter());
                    ps.setString(17, job.callbackUrl());
                    ps.setString(18, job.traceparent());
                    ps.setInt(19, runningQuota(job.kind()));
                    try (ResultSet rs = ps.executeQuery()) {
                      if (rs.next()) {
                        return new Enqueued(uid, true, JobStatus.PENDING);
                      }
                    }
                  }
                  Enqueued[] replays = new Enqueued[1];
                  replays(
                      c,
                      job,
                      new String[] {job.idempotencyKey()},
                      new String[] {payload},
                      new int[] {0},
                      replays);
                  return replays[0];
                },
                Enqueued::created);
      } catch (SQLException e) {
        throw failed(job.kind(), 1, e);
      }
      if (outcome != null) {
        if (outcome.created()) {
          added(job.kind(), 1, shard, job.priority() > JobPriority.DEFAULT);
        }
        return outcome;
      }
    }
    throw new IllegalStateException(
        "idempotency key " + job.idempotencyKey() + " keeps changing hands");
  }

  /** Adds jobs none of which has a key (JobInsertMany), committed on its own. */
  private List<Enqueued> insertMany(EnqueueRequest head, Rows rows) {
    try {
      admitted(
          head,
          false,
          c -> {
            runInsertMany(c, head, rows);
            return rows;
          },
          added -> true);
    } catch (SQLException e) {
      throw failed(head.kind(), rows.uids.length, e);
    }
    added(head.kind(), rows.uids.length, commonShard(rows.shards), rows.aboveDefault);
    return Arrays.stream(rows.uids).map(uid -> new Enqueued(uid, true, JobStatus.PENDING)).toList();
  }

  /** How many single enqueues wait for a shared commit to take them. */
  int waitingForCommit() {
    return singles.waiting();
  }

  /** Runs JobInsertMany for {@code rows} on {@code c}, in its transaction if it has one. */
  private void runInsertMany(Connection c, EnqueueRequest head, Rows rows) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(JOB_INSERT_MANY)) {
      bindNewJobs(c, ps, head, rows);
      ps.setArray(12, c.createArrayOf("text", rows.shards));
      ps.setArray(13, c.createArrayOf("smallint", rows.priorities));
      ps.setArray(14, c.createArrayOf("timestamptz", rows.runAfter));
      ps.setArray(15, c.createArrayOf("timestamptz", rows.delayedUntil));
      ps.setArray(16, c.createArrayOf("text", rows.callbackUrls));
      ps.setArray(17, c.createArrayOf("text", rows.traceparents));
      ps.setInt(18, runningQuota(head.kind()));
      ps.execute();
    }
  }

  /**
   * The work of one shared commit ({@link #singles}): single enqueues without a key or a quota,
   * each from its own caller. One alone takes JobInsertOne, as an enqueue always did. More are
   * inserted in one transaction, one JobInsertMany per kind and owner in arrival order, and
   * committed once; every caller is answered only after that commit. When a statement fails,
   * nothing of the batch was committed, so each job is then inserted on its own and its caller gets
   * its own outcome: a job the database refuses fails no other. When the commit itself fails, the
   * transaction's fate is read on another connection (TxStatus): committed, every caller has its
   * job; aborted, each job is inserted on its own; unknown, every caller gets the failure, as a
   * caller alone would.
   */
  List<SharedCommit.Outcome<Enqueued>> insertTogether(List<EnqueueRequest> jobs) {
    if (jobs.size() == 1) {
      return List.of(insertAlone(jobs.get(0)));
    }
    Map<List<Object>, List<Integer>> byKindAndOwner = new LinkedHashMap<>();
    for (int i = 0; i < jobs.size(); i++) {
      EnqueueRequest job = jobs.get(i);
      byKindAndOwner
          .computeIfAbsent(
              Arrays.asList(job.kind(), job.owner(), job.quotaExempt()), k -> new ArrayList<>())
          .add(i);
    }
    List<Group> groups = new ArrayList<>(byKindAndOwner.size());
    List<Integer> alone = new ArrayList<>();
    for (List<Integer> members : byKindAndOwner.values()) {
      try {
        groups.add(
            new Group(
                members,
                new Rows(jobs.get(members.get(0)), members.stream().map(jobs::get).toList())));
      } catch (RuntimeException e) {
        // A payload the Java API cannot encode: its group goes job by job, so only its caller
        // fails.
        alone.addAll(members);
      }
    }
    Fate fate =
        groups.isEmpty() ? Fate.ABORTED : insertGrouped(groups.stream().map(Group::rows).toList());
    List<SharedCommit.Outcome<Enqueued>> outcomes =
        new ArrayList<>(Collections.nCopies(jobs.size(), null));
    for (Group group : groups) {
      for (int k = 0; k < group.members.size(); k++) {
        int i = group.members.get(k);
        outcomes.set(
            i,
            switch (fate.state) {
              case COMMITTED ->
                  SharedCommit.Outcome.of(
                      new Enqueued(group.rows.uids[k], true, JobStatus.PENDING));
              case ABORTED -> insertAlone(jobs.get(i));
              case UNKNOWN ->
                  SharedCommit.Outcome.failed(failed(jobs.get(i).kind(), 1, fate.error));
            });
      }
    }
    for (int i : alone) {
      outcomes.set(i, insertAlone(jobs.get(i)));
    }
    if (fate.state == FateState.COMMITTED) {
      // After the commit nothing may fail a caller whose job is in: meters and wake-ups are told
      // in a guard of their own.
      try {
        metrics.sharedCommit(groups.stream().mapToInt(g -> g.members.size()).sum());
        for (Group group : groups) {
          Rows rows = group.rows;
          added(rows.kind, rows.uids.length, commonShard(rows.shards), rows.aboveDefault);
        }
      } catch (RuntimeException e) {
        LOG.warnf(e, "shared enqueue commit: jobs added, but the meters or the wake-up failed");
      }
    }
    return outcomes;
  }

  /** The jobs of one kind and owner in a shared commit: their places in the batch, their rows. */
  private record Group(List<Integer> members, Rows rows) {}

  /** What became of a shared commit's transaction. */
  private enum FateState {
    COMMITTED,
    ABORTED,
    UNKNOWN
  }

  /** A transaction's fate, with the error that left it unknown. */
  private record Fate(FateState state, SQLException error) {
    static final Fate ABORTED = new Fate(FateState.ABORTED, null);
    static final Fate COMMITTED = new Fate(FateState.COMMITTED, null);
  }

  /**
   * Inserts the groups in one transaction and commits it. A statement that fails, or a connection
   * that cannot start the transaction, leaves nothing committed (aborted). A failed commit is
   * resolved by reading the transaction's status on another connection.
   */
  private Fate insertGrouped(List<Rows> grouped) {
    Fate fate = Fate.ABORTED; // nothing is in until the commit says so
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      long xid;
      try {
        try (PreparedStatement ps = c.prepareStatement(TX_ID);
            ResultSet rs = ps.executeQuery()) {
          rs.next();
          xid = rs.getLong(1);
        }
        for (Rows rows : grouped) {
          runInsertMany(c, rows.head, rows);
        }
      } catch (SQLException | RuntimeException e) {
        rollbackQuietly(c, e);
        restoreAutoCommit(c);
        LOG.debugf(e, "shared enqueue commit: a statement failed; each job goes on its own");
        return Fate.ABORTED;
      }
      try {
        c.commit();
        fate = Fate.COMMITTED;
      } catch (SQLException e) {
        rollbackQuietly(c, e);
        fate = fateOf(xid, e);
      }
      restoreAutoCommit(c);
    } catch (SQLException e) {
      // Taking the connection or starting the transaction failed, so nothing went in (ABORTED);
      // or releasing the connection failed once the fate was known, and that fate stands.
      LOG.debugf(e, "shared enqueue commit: %s", fate.state);
    }
    return fate;
  }

  /**
   * The fate of transaction {@code xid}, whose commit failed with {@code error}, read on another
   * connection: committed, aborted, or unknown while it still runs or the database cannot be asked.
   */
  private Fate fateOf(long xid, SQLException error) {
    for (int attempt = 0; attempt < 3; attempt++) {
      try (Connection c = dataSource.getConnection();
          PreparedStatement ps = c.prepareStatement(TX_STATUS)) {
        ps.setLong(1, xid);
        try (ResultSet rs = ps.executeQuery()) {
          String status = rs.next() ? rs.getString(1) : null;
          if ("committed".equals(status)) {
            return Fate.COMMITTED;
          }
          if ("aborted".equals(status)) {
            return Fate.ABORTED;
          }
        }
      } catch (SQLException e) {
        error.addSuppressed(e);
      }
      try {
        Thread.sleep(50L << attempt);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    return new Fate(FateState.UNKNOWN, error);
  }

  /** One job inserted on its own (JobInsertOne), its failure kept as its outcome. */
  private SharedCommit.Outcome<Enqueued> insertAlone(EnqueueRequest job) {
    try {
      return SharedCommit.Outcome.of(insertOne(job));
    } catch (RuntimeException e) {
      return SharedCommit.Outcome.failed(e);
    }
  }

  /** Rolls back after {@code cause}; a rollback that fails too (a lost session) is noted on it. */
  private static void rollbackQuietly(Connection c, Exception cause) {
    try {
      c.rollback();
    } catch (SQLException e) {
      cause.addSuppressed(e);
    }
  }

  /** Gives the connection back to the pool in autocommit, as every other enqueue leaves it. */
  private static void restoreAutoCommit(Connection c) {
    try {
      c.setAutoCommit(true);
    } catch (SQLException e) {
      // A lost session: the pool finds and drops it on its next validation.
    }
  }

  /**
   * Adds jobs some of which carry a key (JobInsertBatch) in one transaction, and answers each key
   * used before with the job that holds it (JobGetReplays).
   */
  private List<Enqueued> insertBatch(EnqueueRequest head, Rows rows) {
    // Two tries: a first job may be swept between the insert and the lookup, freeing its key.
    for (int attempt = 0; attempt < 2; attempt++) {
      List<Enqueued> outcomes;
      try {
        outcomes =
            admitted(
                head,
                true,
                c -> tryInsertBatch(c, head, rows),
                done -> done.stream().anyMatch(Enqueued::created));
      } catch (SQLException e) {
        throw failed(head.kind(), rows.uids.length, e);
      }
      if (outcomes != null) {
        int created = (int) outcomes.stream().filter(Enqueued::created).count();
        if (created > 0) {
          added(head.kind(), created, commonShard(rows.shards), rows.aboveDefault);
        }
        return outcomes;
      }
      rows.renewUids();
    }
    throw new IllegalStateException("idempotency keys of a batch keep changing hands");
  }

  /** One try of {@link #insertBatch}; null when a key changed hands meanwhile. */
  private List<Enqueued> tryInsertBatch(Connection c, EnqueueRequest head, Rows rows)
      throws SQLException {
    int n = rows.uids.length;
    Set<UUID> inserted = new HashSet<>();
    try (PreparedStatement ps = c.prepareStatement(JOB_INSERT_BATCH)) {
      bindNewJobs(c, ps, head, rows);
      ps.setArray(12, c.createArrayOf("text", rows.keys));
      ps.setArray(13, c.createArrayOf("text", rows.shards));
      ps.setArray(14, c.createArrayOf("smallint", rows.priorities));
      ps.setArray(15, c.createArrayOf("timestamptz", rows.runAfter));
      ps.setArray(16, c.createArrayOf("timestamptz", rows.delayedUntil));
      ps.setArray(17, c.createArrayOf("text", rows.callbackUrls));
      ps.setArray(18, c.createArrayOf("text", rows.traceparents));
      ps.setInt(19, runningQuota(head.kind()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          inserted.add(rs.getObject(1, UUID.class));
        }
      }
    }
    Enqueued[] outcomes = new Enqueued[n];
    List<String> replayKeys = new ArrayList<>();
    List<String> replayPayloads = new ArrayList<>();
    List<Integer> replayIndex = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      if (inserted.contains(rows.uids[i])) {
        outcomes[i] = new Enqueued(rows.uids[i], true, JobStatus.PENDING);
      } else {
        replayKeys.add(rows.keys[i]);
        replayPayloads.add(rows.payloads[i]);
        replayIndex.add(i);
      }
    }
    if (!replayKeys.isEmpty()) {
      replays(
          c,
          head,
          replayKeys.toArray(String[]::new),
          replayPayloads.toArray(String[]::new),
          replayIndex.stream().mapToInt(Integer::intValue).toArray(),
          outcomes);
      for (Enqueued outcome : outcomes) {
        if (outcome == null) {
          return null;
        }
      }
    }
    return List.of(outcomes);
  }

  /**
   * Reads the jobs that hold the keys of the requests at {@code index} (JobGetReplays) into {@code
   * outcomes}; a key no job holds any more leaves its place null.
   *
   * @throws KeyReusedException when a key is held by a job of a different request
   */
  private static void replays(
      Connection c,
      EnqueueRequest head,
      String[] keys,
      String[] payloads,
      int[] index,
      Enqueued[] outcomes)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(JOB_GET_REPLAYS)) {
      ps.setString(1, head.kind());
      ps.setArray(2, c.createArrayOf("text", keys));
      ps.setArray(3, c.createArrayOf("text", payloads));
      ps.setString(4, head.ownerKind());
      ps.setString(5, head.ownerId());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          int i = index[rs.getInt(1) - 1];
          UUID first = rs.getObject(2, UUID.class);
          JobStatus status = JobStatus.fromDbValue(rs.getString(3)).orElseThrow();
          if (!rs.getBoolean(4)) {
            throw new KeyReusedException(i, first, status);
          }
          outcomes[i] = new Enqueued(first, false, status);
        }
      }
    }
  }

  /**
   * Work on a connection that adds jobs; null when a key changed hands and it must be tried again.
   */
  @FunctionalInterface
  private interface Insert<T> {
    T run(Connection c) throws SQLException;
  }

  /**
   * Runs {@code insert} on a connection of its own, committed on return. When the owner's pending
   * quota binds ({@link QuotaAdmission#limit}), or {@code transactional} asks for it, it runs in a
   * transaction: under a quota, that first takes the owner's quota lock and, when {@code added}
   * says the insert added a job, counts the owner's pending jobs after it; over the limit, or when
   * the insert answers null, it is rolled back. Otherwise one statement needs no transaction, and
   * spends no round trip on one.
   */
  private <T> T admitted(
      EnqueueRequest head, boolean transactional, Insert<T> insert, Predicate<T> added)
      throws SQLException {
    int limit = quota.limit(head.kind(), head.owner(), head.quotaExempt());
    try (Connection c = dataSource.getConnection()) {
      if (limit <= 0 && !transactional) {
        return insert.run(c);
      }
      c.setAutoCommit(false);
      try {
        if (limit > 0) {
          quota.lock(c, head.kind(), head.owner());
        }
        T result = insert.run(c);
        if (result == null) {
          c.rollback();
          return null;
        }
        if (limit > 0 && added.test(result)) {
          quota.check(c, head.kind(), head.owner(), limit);
        }
        c.commit();
        return result;
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(true);
      }
    }
  }

  /** Counts {@code count} new jobs and wakes the kind's owner in this process once they commit. */
  private void added(String kind, int count, String shard, boolean fromHead) {
    metrics.enqueued(kind, count);
    enqueued.fire(new JobsEnqueued(kind, shard, fromHead));
  }

  private static IllegalStateException failed(String kind, int count, SQLException e) {
    return new IllegalStateException("could not enqueue " + count + " job(s) of kind " + kind, e);
  }

  /**
   * Binds the twelve leading parameters JobInsertOne and JobInsertIdempotent share, the job's shard
   * last.
   */
  private void bindNewJob(
      PreparedStatement ps, UUID uid, String shard, EnqueueRequest job, String payload)
      throws SQLException {
    Instant now = clock.now();
    OffsetDateTime created = JobRows.timestamp(now);
    ps.setObject(1, uid);
    ps.setString(2, job.kind());
    ps.setString(3, job.ownerKind());
    ps.setString(4, job.ownerId());
    ps.setString(5, job.preferredName());
    ps.setString(6, payload);
    ps.setObject(7, created);
    ps.setObject(8, created);
    settings.bindRetentionEnd(ps, 9, job.kind(), now);
    ps.setString(12, shard);
  }

  /**
   * Binds the eleven leading parameters JobInsertMany and JobInsertBatch share; the arrays after
   * them differ.
   */
  private void bindNewJobs(Connection c, PreparedStatement ps, EnqueueRequest head, Rows rows)
      throws SQLException {
    Instant now = clock.now();
    OffsetDateTime created = JobRows.timestamp(now);
    ps.setString(1, head.kind());
    ps.setString(2, head.ownerKind());
    ps.setString(3, head.ownerId());
    ps.setObject(4, created);
    ps.setObject(5, created);
    settings.bindRetentionEnd(ps, 6, head.kind(), now);
    ps.setArray(9, c.createArrayOf("uuid", rows.uids));
    ps.setArray(10, c.createArrayOf("text", rows.payloads));
    ps.setArray(11, c.createArrayOf("text", rows.names));
  }

  /** Binds a job's {@code run_after} and {@code delayed_until} (set while it lies ahead). */
  private void bindRunAfter(PreparedStatement ps, int first, Instant runAfter) throws SQLException {
    ps.setObject(first, runAfter == null ? null : JobRows.timestamp(runAfter));
    Instant delayed = delayedUntil(runAfter, clock.now());
    ps.setObject(first + 1, delayed == null ? null : JobRows.timestamp(delayed));
  }

  /**
   * When a job asked to run after {@code runAfter} is not yet due at {@code now}: that, or null.
   */
  private static Instant delayedUntil(Instant runAfter, Instant now) {
    return runAfter != null && runAfter.isAfter(now) ? runAfter : null;
  }

  /**
   * The kind's configured {@code max-running-per-owner} (0: none), the parameter of {@link
   * #mayBeIdle}: the statement itself applies a stored override, spending no round trip on it.
   */
  private int runningQuota(String kind) {
    return settings.configured(kind).maxRunningPerOwner();
  }

  /** The shard all of {@code keys} are in, or null when they span several. */
  private static String commonShard(String[] keys) {
    for (String key : keys) {
      if (!key.equals(keys[0])) {
        return null;
      }
    }
    return keys[0];
  }

  /**
   * The columns of a list of new jobs, checked, one array per column in list order, as the unnest
   * statements bind them.
   */
  private final class Rows {
    final EnqueueRequest head;
    final String kind;
    final UUID[] uids;
    final String[] shards;
    final String[] payloads;
    final String[] names;
    final String[] keys;
    final Short[] priorities;
    final OffsetDateTime[] runAfter;
    final OffsetDateTime[] delayedUntil;
    final String[] callbackUrls;
    final String[] traceparents;
    final boolean keyed;
    final boolean aboveDefault;

    Rows(EnqueueRequest head, List<EnqueueRequest> jobs) {
      int n = jobs.size();
      this.head = head;
      kind = head.kind();
      uids = new UUID[n];
      shards = new String[n];
      payloads = new String[n];
      names = new String[n];
      keys = new String[n];
      priorities = new Short[n];
      runAfter = new OffsetDateTime[n];
      delayedUntil = new OffsetDateTime[n];
      callbackUrls = new String[n];
      traceparents = new String[n];
      Instant now = clock.now();
      Set<String> seen = new HashSet<>();
      boolean above = false;
      for (int i = 0; i < n; i++) {
        EnqueueRequest job = jobs.get(i);
        if (!kind.equals(job.kind())
            || !Objects.equals(job.owner(), head.owner())
            || job.quotaExempt() != head.quotaExempt()) {
          throw new IllegalArgumentException(
              "the jobs of one enqueue share their kind, owner and quota exemption");
        }
        requireJob(job);
        String key = job.idempotencyKey();
        if (key != null && !seen.add(key)) {
          throw new IllegalArgumentException("two jobs of the batch have the same idempotency key");
        }
        payloads[i] = JsonCodec.encode(job.payload());
        names[i] = job.preferredName();
        keys[i] = key;
        priorities[i] = (short) job.priority();
        above |= job.priority() > JobPriority.DEFAULT;
        Instant delayed = delayedUntil(job.runAfter(), now);
        runAfter[i] = job.runAfter() == null ? null : JobRows.timestamp(job.runAfter());
        delayedUntil[i] = delayed == null ? null : JobRows.timestamp(delayed);
        callbackUrls[i] = job.callbackUrl();
        traceparents[i] = job.traceparent();
      }
      keyed = !seen.isEmpty();
      aboveDefault = above;
      renewUids();
    }

    /** New uids, and the shards they hash to, for another try. */
    void renewUids() {
      for (int i = 0; i < uids.length; i++) {
        uids[i] = JobIds.next();
        shards[i] = JobInserter.this.shards.shardOf(kind, uids[i]);
      }
    }
  }

  private static void requireKindAndOwner(String kind, Owner owner) {
    if (kind == null || !KIND.matcher(kind).matches()) {
      throw new IllegalArgumentException(
          "kind must be 1 to 40 lower-case letters, digits or '_', starting with a letter: "
              + kind);
    }
    if (owner != null) {
      requireLength("owner kind", owner.kind(), MAX_OWNER_LENGTH);
      requireLength("owner id", owner.id(), MAX_OWNER_LENGTH);
    }
  }

  /** Checks what one request holds beyond its kind and owner. */
  private static void requireJob(EnqueueRequest job) {
    if (job.payload() == null) {
      throw new IllegalArgumentException("payload is required (use an empty object for none)");
    }
    requireLength("preferred name", job.preferredName(), MAX_NAME_LENGTH);
    JobPriority.check(job.priority());
    String key = job.idempotencyKey();
    if (key != null) {
      if (job.owner() == null) {
        throw new IllegalArgumentException("an idempotency key needs an owner");
      }
      if (key.isBlank() || key.length() > MAX_KEY_LENGTH) {
        throw new IllegalArgumentException("idempotency key must be 1 to 200 characters");
      }
    }
  }

  private static void requireLength(String what, String value, int max) {
    if (value != null && (value.isBlank() || value.length() > max)) {
      throw new IllegalArgumentException(
          what + " must be non-blank and at most " + max + " characters");
    }
  }
}
