package io.asyncjobs.queue;

import io.agroal.api.AgroalDataSource;
import io.asyncjobs.config.Shards;
import io.asyncjobs.settings.SettingsStore;
import io.asyncjobs.time.Clock;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Event;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * The queue's way in: enqueue one job, an idempotent one, many, or a batch, under the owner's
 * quota. Pure database access with no state of its own, so any replica may call it from a request
 * handler. Reads, listing and touch are {@link JobReads}'s; cancel and retry are {@link JobBulk}'s.
 */
@ApplicationScoped
public class JobQueue {

  /**
   * The NOTIFY channel an enqueue wakes the owner on; the payload is the job kind, followed by
   * {@link #FROM_HEAD} when the job is older than the jobs the owner claims next.
   */
  public static final String ENQUEUED_CHANNEL = "jobs_enqueued";

  /**
   * Marks a notification for a job that became pending again (an admin retry): its uid is older
   * than what the owner claimed lately, so the owner's next claim starts from the head of the
   * queue.
   */
  public static final String FROM_HEAD = ":head";

  /**
   * Follows the kind in a notification sent when an admin paused or resumed it: every runner of the
   * kind reads its settings again and, resumed, claims from the head at once.
   */
  public static final String SETTINGS_CHANGED = ":settings";

  /** Separates the kind from the shard in a wake-up payload: {@code zip/zip-3}. */
  public static final String SHARD_SEPARATOR = "/";

  private static final Pattern KIND = Pattern.compile("[a-z][a-z0-9_]{0,39}");
  private static final int MAX_NAME_LENGTH = 255;
  private static final int MAX_OWNER_LENGTH = 200;

  /** Largest batch {@link #enqueueMany} takes. */
  public static final int MAX_BATCH = 10_000;

  /**
   * Wakes the owner, but only when it may be idle ({@link #mayBeIdle}). When it is busy with the
   * kind, it claims more as its tasks finish, so a notification would only add a global lock and a
   * signal per commit under load. The scheduled tick covers the rare race between this check and
   * the owner's claim. Its one parameter is {@link #mayBeIdle}'s.
   */
  private static final String NOTIFY_IF_OWNER_MAY_BE_IDLE =
      " SELECT pg_notify('"
          + ENQUEUED_CHANNEL
          + "', "
          + wakePayload("i")
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
   */
  static String mayBeIdle(String alias) {
    String due =
        " p.kind = "
            + alias
            + ".kind AND p.shard = "
            + alias
            + ".shard AND p.status = 'pending' AND p.delayed_until IS NULL";
    return "CASE WHEN COALESCE((SELECT s.max_running_per_owner FROM service_settings s"
        + " WHERE s.service = "
        + alias
        + ".kind), ?::int) = 0"
        + " THEN NOT EXISTS (SELECT 1 FROM jobs p WHERE"
        + due
        + ") ELSE NOT EXISTS (SELECT 1 FROM jobs p WHERE"
        + due
        + " AND p.owner_kind = "
        + alias
        + ".owner_kind AND p.owner_id = "
        + alias
        + ".owner_id) END";
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
        + FROM_HEAD
        + "' ELSE '' END";
  }

  /**
   * The wake-up payload of the rows {@code alias} names: the kind, and {@code /shard} after it when
   * the shard is not {@link Shards#ALL} (so that the default's payload is the kind alone, as before
   * shards).
   */
  static String wakePayload(String alias) {
    return alias
        + ".kind || CASE WHEN "
        + alias
        + ".shard = '"
        + Shards.ALL
        + "' THEN '' ELSE '"
        + SHARD_SEPARATOR
        + "' || "
        + alias
        + ".shard END";
  }

  /** JobInsertOne: adds one pending job and notifies the owner in the same round trip. */
  private static final String JOB_INSERT_ONE =
      "WITH inserted AS ("
          + " INSERT INTO jobs (uid, kind, status, owner_kind, owner_id, preferred_name, payload,"
          + "                   created_at, updated_at, expires_at, shard, priority, run_after,"
          + "                   delayed_until, callback_url, traceparent)"
          + " VALUES (?, ?, 'pending', ?, ?, ?, ?::jsonb, ?, ?, "
          + SettingsStore.EFFECTIVE_RETENTION_END
          + ", ?, ?, ?, ?, ?, ?)"
          + " RETURNING kind, shard, owner_kind, owner_id, priority)"
          + NOTIFY_IF_OWNER_MAY_BE_IDLE;

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
          + ENQUEUED_CHANNEL
          + "', "
          + wakePayload("i")
          + headIfAbove("i.priority")
          + ") END FROM inserted i";

  /** JobGetByIdempotencyKey: the job an owner enqueued with a key. */
  private static final String JOB_GET_BY_IDEMPOTENCY_KEY =
      "SELECT uid FROM jobs WHERE owner_kind = ? AND owner_id = ? AND idempotency_key = ?";

  /** JobInsertMany: adds pending jobs in array order, then notifies as JobInsertOne does. */
  private static final String JOB_INSERT_MANY =
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
          + ENQUEUED_CHANNEL
          + "', "
          + wakePayload("i")
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
   * JobGetBatchReplays: for each idempotency key of a batch that was already used, the job that
   * holds it, its status, and whether it is the same request (same kind, and a payload equal as
   * JSON: jsonb compares numbers by value and ignores key order).
   */
  private static final String JOB_GET_BATCH_REPLAYS =
      """
      SELECT n.ord, j.uid, j.status, (j.kind = ? AND j.payload = n.payload::jsonb)
        FROM unnest(?::text[], ?::text[]) WITH ORDINALITY AS n(idempotency_key, payload, ord)
        JOIN jobs j
          ON j.owner_kind = ? AND j.owner_id = ? AND j.idempotency_key = n.idempotency_key
      """;

  /**
   * QuotaLock: serializes one owner's enqueues of one kind for the rest of the transaction, so that
   * the pending count read after the insert is exact however many enqueue at once.
   */
  private static final String QUOTA_LOCK =
      "SELECT pg_advisory_xact_lock(hashtextextended('quota:' || ? || ':' || ? || ':' || ?, 0))";

  /** QuotaPendingCount: one owner's pending jobs of one kind (the pending-by-owner index). */
  private static final String QUOTA_PENDING_COUNT =
      "SELECT count(*) FROM jobs WHERE kind = ? AND owner_kind = ? AND owner_id = ?"
          + " AND status = 'pending'";

  /** JobAverageRun: the kind's mean run time over its last 100 done jobs, in ms (null: none). */
  private static final String JOB_AVERAGE_RUN =
      "SELECT avg(duration_ms) FROM (SELECT duration_ms FROM jobs WHERE kind = ?"
          + " AND status = 'done' ORDER BY completed_at DESC LIMIT 100) recent";

  private final SettingsStore settings;
  private final Clock clock;
  private final AgroalDataSource dataSource;
  private final Event<JobsEnqueued> enqueued;
  private final QueueMetrics metrics;
  private final Shards shards;
  private final JobReads reads;

  JobQueue(
      SettingsStore settings,
      Clock clock,
      AgroalDataSource dataSource,
      Event<JobsEnqueued> enqueued,
      QueueMetrics metrics,
      Shards shards,
      JobReads reads) {
    this.settings = settings;
    this.reads = reads;
    this.shards = shards;
    this.clock = clock;
    this.dataSource = dataSource;
    this.enqueued = enqueued;
    this.metrics = metrics;
  }

  /**
   * Adds a pending job and returns its uid. The row expires one retention period after enqueue; the
   * owner restarts that period when the job finishes, and never sweeps a job that is still pending
   * or running.
   *
   * @param kind the service that will process the job
   * @param payload kind-specific input; stored as JSON
   * @param ownerKind principal kind of the owner, or null
   * @param ownerId principal id of the owner, or null
   * @param preferredName file name for the artifact's download, or null
   * @throws IllegalArgumentException when an argument is malformed
   */
  public UUID enqueue(
      String kind,
      Map<String, Object> payload,
      String ownerKind,
      String ownerId,
      String preferredName) {
    return enqueue(kind, payload, ownerKind, ownerId, preferredName, JobPriority.DEFAULT);
  }

  /**
   * {@link #enqueue(String, Map, String, String, String)} with a claim priority.
   *
   * @param priority {@value JobPriority#MIN} to {@value JobPriority#MAX}, higher first
   */
  public UUID enqueue(
      String kind,
      Map<String, Object> payload,
      String ownerKind,
      String ownerId,
      String preferredName,
      int priority) {
    return enqueue(
        kind, payload, ownerKind, ownerId, preferredName, new Admission(priority, false));
  }

  /**
   * How a new job is admitted: its claim priority, and whether its owner's pending quota applies.
   *
   * @param priority {@value JobPriority#MIN} to {@value JobPriority#MAX}, higher first
   * @param quotaExempt true for a caller the kind's {@code max-pending-per-owner} does not bind (an
   *     admin)
   * @param runAfter the earliest start, or null for as soon as possible: until then the job is
   *     pending but not due, and no claim takes it
   */
  public record Admission(
      int priority, boolean quotaExempt, Instant runAfter, String callbackUrl, String traceparent) {

    /** The default priority, under the quota, due at once. */
    public static final Admission DEFAULT = new Admission(JobPriority.DEFAULT, false, null);

    /** Due at once. */
    public Admission(int priority, boolean quotaExempt) {
      this(priority, quotaExempt, null);
    }

    /** Without a callback or a trace. */
    public Admission(int priority, boolean quotaExempt, Instant runAfter) {
      this(priority, quotaExempt, runAfter, null, null);
    }
  }

  /**
   * {@link #enqueue(String, Map, String, String, String)} as {@code admission} says.
   *
   * @throws QuotaExceededException when the owner would hold more pending jobs of the kind than its
   *     {@code max-pending-per-owner}; nothing is added then
   */
  public UUID enqueue(
      String kind,
      Map<String, Object> payload,
      String ownerKind,
      String ownerId,
      String preferredName,
      Admission admission) {
    requireOwnerAndKind(kind, ownerKind, ownerId);
    requireJob(payload, preferredName);
    int priority = JobPriority.check(admission.priority());
    UUID uid = JobIds.next();
    String shard;
    try {
      shard =
          underQuota(
              kind,
              ownerKind,
              ownerId,
              admission,
              c -> {
                try (PreparedStatement ps = c.prepareStatement(JOB_INSERT_ONE)) {
                  String key =
                      bindNewJob(ps, uid, kind, payload, ownerKind, ownerId, preferredName);
                  ps.setInt(13, priority);
                  bindRunAfter(ps, 14, admission.runAfter());
                  ps.setString(16, admission.callbackUrl());
                  ps.setString(17, admission.traceparent());
                  ps.setInt(18, runningQuota(kind));
                  ps.execute();
                  return key;
                }
              });
    } catch (SQLException e) {
      throw new IllegalStateException("could not enqueue a job of kind " + kind, e);
    }
    metrics.enqueued(kind, 1);
    enqueued.fire(new JobsEnqueued(kind, shard, priority > JobPriority.DEFAULT));
    return uid;
  }

  /** Binds a job's {@code run_after} and {@code delayed_until} (set while it lies ahead). */
  private void bindRunAfter(PreparedStatement ps, int first, Instant runAfter) throws SQLException {
    ps.setObject(first, runAfter == null ? null : JobRows.timestamp(runAfter));
    Instant delayed = delayedUntil(runAfter);
    ps.setObject(first + 1, delayed == null ? null : JobRows.timestamp(delayed));
  }

  /** When a job asked to run after {@code runAfter} is not yet due: that time, else null. */
  private Instant delayedUntil(Instant runAfter) {
    return runAfter != null && runAfter.isAfter(clock.now()) ? runAfter : null;
  }

  /** The run_after (first) and delayed_until (second) arrays of new jobs. */
  private OffsetDateTime[][] runAfterArrays(Instant[] runAfter) {
    OffsetDateTime[][] both = new OffsetDateTime[2][runAfter.length];
    for (int i = 0; i < runAfter.length; i++) {
      Instant delayed = delayedUntil(runAfter[i]);
      both[0][i] = runAfter[i] == null ? null : JobRows.timestamp(runAfter[i]);
      both[1][i] = delayed == null ? null : JobRows.timestamp(delayed);
    }
    return both;
  }

  /** Work on a connection that adds jobs. */
  @FunctionalInterface
  private interface Insert<T> {
    T run(Connection c) throws SQLException;
  }

  /**
   * Runs {@code insert} on a connection of its own, committed on return. When the kind limits an
   * owner's pending jobs and the admission is not exempt, it runs in a transaction that first takes
   * the owner's quota lock and, after the insert, counts the owner's pending jobs: over the limit,
   * it is rolled back and {@link QuotaExceededException} thrown.
   */
  private <T> T underQuota(
      String kind, String ownerKind, String ownerId, Admission admission, Insert<T> insert)
      throws SQLException {
    return underQuota(kind, ownerKind, ownerId, admission, insert, result -> true);
  }

  /** {@link #underQuota}, counting only when {@code added} says the insert added a job. */
  private <T> T underQuota(
      String kind,
      String ownerKind,
      String ownerId,
      Admission admission,
      Insert<T> insert,
      java.util.function.Predicate<T> added)
      throws SQLException {
    int limit = admission.quotaExempt() || ownerKind == null ? 0 : pendingQuota(kind);
    try (Connection c = dataSource.getConnection()) {
      if (limit <= 0) {
        return insert.run(c);
      }
      c.setAutoCommit(false);
      try {
        lockQuota(c, kind, ownerKind, ownerId);
        T result = insert.run(c);
        if (added.test(result)) {
          checkQuota(c, kind, ownerKind, ownerId, limit);
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

  private static void lockQuota(Connection c, String kind, String ownerKind, String ownerId)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(QUOTA_LOCK)) {
      ps.setString(1, kind);
      ps.setString(2, ownerKind);
      ps.setString(3, ownerId);
      ps.execute();
    }
  }

  /** Throws {@link QuotaExceededException} when the owner holds more than {@code limit} pending. */
  private void checkQuota(Connection c, String kind, String ownerKind, String ownerId, int limit)
      throws SQLException {
    long pending;
    try (PreparedStatement ps = c.prepareStatement(QUOTA_PENDING_COUNT)) {
      ps.setString(1, kind);
      ps.setString(2, ownerKind);
      ps.setString(3, ownerId);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        pending = rs.getLong(1);
      }
    }
    if (pending > limit) {
      throw new QuotaExceededException(kind, limit, pending, retryAfter(c, kind, pending - limit));
    }
  }

  /**
   * About how long until {@code over} of the owner's pending jobs are done: the kind's recent mean
   * run time per job over its concurrency, at least 1 s and at most an hour.
   */
  private Duration retryAfter(Connection c, String kind, long over) throws SQLException {
    double meanMs = 1000;
    try (PreparedStatement ps = c.prepareStatement(JOB_AVERAGE_RUN)) {
      ps.setString(1, kind);
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next() && rs.getObject(1) != null) {
          meanMs = rs.getDouble(1);
        }
      }
    }
    int concurrency = Math.max(1, settings.effective(kind).maxConcurrent());
    long seconds = (long) Math.ceil(meanMs * over / concurrency / 1000.0);
    return Duration.ofSeconds(Math.max(1, Math.min(3600, seconds)));
  }

  /** Cached quota per kind: settings change at run time, so it is read again after a second. */
  private final Map<String, long[]> quotas = new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * The kind's configured {@code max-running-per-owner} (0: none), the parameter of {@link
   * #mayBeIdle}: the statement itself applies a stored override, spending no round trip on it.
   */
  private int runningQuota(String kind) {
    return settings.configured(kind).maxRunningPerOwner();
  }

  /** The kind's effective {@code max-pending-per-owner} (0: none), read at most once a second. */
  private int pendingQuota(String kind) {
    long now = System.nanoTime();
    long[] cached = quotas.get(kind);
    if (cached != null && now - cached[1] < java.util.concurrent.TimeUnit.SECONDS.toNanos(1)) {
      return (int) cached[0];
    }
    int limit = settings.effective(kind).maxPendingPerOwner();
    quotas.put(kind, new long[] {limit, now});
    return limit;
  }

  /**
   * Adds a pending job unless this owner already enqueued one with {@code idempotencyKey}, in which
   * case that first job is returned and nothing is added.
   *
   * @param idempotencyKey 1 to 200 characters chosen by the caller; requires an owner
   * @return the job's uid and whether it was created now
   */
  public Enqueued enqueueIdempotent(
      String kind,
      Map<String, Object> payload,
      String ownerKind,
      String ownerId,
      String preferredName,
      String idempotencyKey) {
    return enqueueIdempotent(
        kind, payload, ownerKind, ownerId, preferredName, idempotencyKey, Admission.DEFAULT);
  }

  /**
   * {@link #enqueueIdempotent(String, Map, String, String, String, String)} with a claim priority
   * for the job if it is created now.
   */
  public Enqueued enqueueIdempotent(
      String kind,
      Map<String, Object> payload,
      String ownerKind,
      String ownerId,
      String preferredName,
      String idempotencyKey,
      Admission admission) {
    requireOwnerAndKind(kind, ownerKind, ownerId);
    JobPriority.check(admission.priority());
    requireJob(payload, preferredName);
    if (ownerKind == null) {
      throw new IllegalArgumentException("an idempotency key needs an owner");
    }
    if (idempotencyKey == null || idempotencyKey.isBlank() || idempotencyKey.length() > 200) {
      throw new IllegalArgumentException("idempotency key must be 1 to 200 characters");
    }
    // Two tries: the first job may be swept between the insert and the lookup, freeing the key.
    for (int attempt = 0; attempt < 2; attempt++) {
      Optional<Enqueued> outcome =
          tryEnqueueIdempotent(
              kind, payload, ownerKind, ownerId, preferredName, idempotencyKey, admission);
      if (outcome.isPresent()) {
        return outcome.get();
      }
    }
    throw new IllegalStateException("idempotency key " + idempotencyKey + " keeps changing hands");
  }

  private Optional<Enqueued> tryEnqueueIdempotent(
      String kind,
      Map<String, Object> payload,
      String ownerKind,
      String ownerId,
      String preferredName,
      String idempotencyKey,
      Admission admission) {
    UUID uid = JobIds.next();
    String[] shard = new String[1];
    Optional<Enqueued> outcome;
    try {
      outcome =
          underQuota(
              kind,
              ownerKind,
              ownerId,
              admission,
              c -> {
                try (PreparedStatement ps = c.prepareStatement(JOB_INSERT_IDEMPOTENT)) {
                  shard[0] = bindNewJob(ps, uid, kind, payload, ownerKind, ownerId, preferredName);
                  ps.setString(13, idempotencyKey);
                  ps.setInt(14, admission.priority());
                  bindRunAfter(ps, 15, admission.runAfter());
                  ps.setString(17, admission.callbackUrl());
                  ps.setString(18, admission.traceparent());
                  ps.setInt(19, runningQuota(kind));
                  try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                      return Optional.of(new Enqueued(uid, true));
                    }
                  }
                }
                try (PreparedStatement ps = c.prepareStatement(JOB_GET_BY_IDEMPOTENCY_KEY)) {
                  ps.setString(1, ownerKind);
                  ps.setString(2, ownerId);
                  ps.setString(3, idempotencyKey);
                  try (ResultSet rs = ps.executeQuery()) {
                    return rs.next()
                        ? Optional.of(new Enqueued(rs.getObject(1, UUID.class), false))
                        : Optional.<Enqueued>empty();
                  }
                }
              },
              found -> found.isPresent() && found.get().created());
    } catch (SQLException e) {
      throw new IllegalStateException("could not enqueue a job of kind " + kind, e);
    }
    if (outcome.isPresent() && outcome.get().created()) {
      metrics.enqueued(kind, 1);
      enqueued.fire(new JobsEnqueued(kind, shard[0], admission.priority() > JobPriority.DEFAULT));
    }
    return outcome;
  }

  /**
   * Binds the twelve leading parameters JobInsertOne and JobInsertIdempotent share, the job's shard
   * last.
   *
   * @return the job's shard
   */
  private String bindNewJob(
      PreparedStatement ps,
      UUID uid,
      String kind,
      Map<String, Object> payload,
      String ownerKind,
      String ownerId,
      String preferredName)
      throws SQLException {
    Instant now = clock.now();
    OffsetDateTime created = JobRows.timestamp(now);
    ps.setObject(1, uid);
    ps.setString(2, kind);
    ps.setString(3, ownerKind);
    ps.setString(4, ownerId);
    ps.setString(5, preferredName);
    ps.setString(6, JsonCodec.encode(payload));
    ps.setObject(7, created);
    ps.setObject(8, created);
    settings.bindRetentionEnd(ps, 9, kind, now);
    String shard = shards.shardOf(kind, uid);
    ps.setString(12, shard);
    return shard;
  }

  /**
   * Binds the eleven leading parameters JobInsertMany and JobInsertBatch share; each one's array of
   * shards, which comes after, is {@link #shardsOf}.
   */
  private void bindNewJobs(
      Connection c,
      PreparedStatement ps,
      String kind,
      String ownerKind,
      String ownerId,
      UUID[] uids,
      String[] payloads,
      String[] names)
      throws SQLException {
    Instant now = clock.now();
    OffsetDateTime created = JobRows.timestamp(now);
    ps.setString(1, kind);
    ps.setString(2, ownerKind);
    ps.setString(3, ownerId);
    ps.setObject(4, created);
    ps.setObject(5, created);
    settings.bindRetentionEnd(ps, 6, kind, now);
    ps.setArray(9, c.createArrayOf("uuid", uids));
    ps.setArray(10, c.createArrayOf("text", payloads));
    ps.setArray(11, c.createArrayOf("text", names));
  }

  /** The shard of each new job of {@code kind}, in the order of {@code uids}. */
  private String[] shardsOf(String kind, UUID[] uids) {
    String[] keys = new String[uids.length];
    for (int i = 0; i < uids.length; i++) {
      keys[i] = shards.shardOf(kind, uids[i]);
    }
    return keys;
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
   * The outcome of {@link #enqueueIdempotent}.
   *
   * @param uid the job
   * @param created whether it was created by this call (false: the key was used before)
   */
  public record Enqueued(UUID uid, boolean created) {}

  /**
   * Adds many pending jobs of one kind and owner in one statement, in list order, and returns their
   * uids in that order. All or none are added.
   *
   * @throws IllegalArgumentException when an argument is malformed; nothing is added then
   */
  public List<UUID> enqueueMany(String kind, List<NewJob> jobs, String ownerKind, String ownerId) {
    return enqueueMany(kind, jobs, ownerKind, ownerId, false);
  }

  /**
   * {@link #enqueueMany(String, List, String, String)}; with {@code quotaExempt} false, the owner's
   * pending quota holds for the jobs together.
   *
   * @throws QuotaExceededException when the jobs would take the owner over its pending quota;
   *     nothing is added then
   */
  public List<UUID> enqueueMany(
      String kind, List<NewJob> jobs, String ownerKind, String ownerId, boolean quotaExempt) {
    requireOwnerAndKind(kind, ownerKind, ownerId);
    if (jobs.isEmpty() || jobs.size() > MAX_BATCH) {
      throw new IllegalArgumentException("a batch holds 1 to " + MAX_BATCH + " jobs");
    }
    int n = jobs.size();
    UUID[] uids = new UUID[n];
    String[] payloads = new String[n];
    String[] names = new String[n];
    Short[] priorities = new Short[n];
    Instant[] runAfter = new Instant[n];
    for (int i = 0; i < n; i++) {
      NewJob job = jobs.get(i);
      requireJob(job.payload(), job.preferredName());
      uids[i] = JobIds.next();
      payloads[i] = JsonCodec.encode(job.payload());
      names[i] = job.preferredName();
      priorities[i] = (short) JobPriority.check(job.priority());
      runAfter[i] = job.runAfter();
    }
    insertMany(
        kind,
        uids,
        payloads,
        names,
        priorities,
        runAfter,
        new String[n],
        new String[n],
        ownerKind,
        ownerId,
        quotaExempt);
    return List.of(uids);
  }

  /** Adds the jobs in one statement (JobInsertMany), committed on its own. */
  private void insertMany(
      String kind,
      UUID[] uids,
      String[] payloads,
      String[] names,
      Short[] priorities,
      Instant[] runAfter,
      String[] callbackUrls,
      String[] traceparents,
      String ownerKind,
      String ownerId,
      boolean quotaExempt) {
    String[] keys = shardsOf(kind, uids);
    OffsetDateTime[][] times = runAfterArrays(runAfter);
    try {
      underQuota(
          kind,
          ownerKind,
          ownerId,
          new Admission(JobPriority.DEFAULT, quotaExempt),
          c -> {
            try (PreparedStatement ps = c.prepareStatement(JOB_INSERT_MANY)) {
              bindNewJobs(c, ps, kind, ownerKind, ownerId, uids, payloads, names);
              ps.setArray(12, c.createArrayOf("text", keys));
              ps.setArray(13, c.createArrayOf("smallint", priorities));
              ps.setArray(14, c.createArrayOf("timestamptz", times[0]));
              ps.setArray(15, c.createArrayOf("timestamptz", times[1]));
              ps.setArray(16, c.createArrayOf("text", callbackUrls));
              ps.setArray(17, c.createArrayOf("text", traceparents));
              ps.setInt(18, runningQuota(kind));
              ps.execute();
              return uids.length;
            }
          });
      metrics.enqueued(kind, uids.length);
      enqueued.fire(new JobsEnqueued(kind, commonShard(keys), aboveDefault(priorities)));
    } catch (SQLException e) {
      throw new IllegalStateException(
          "could not enqueue " + uids.length + " job(s) of kind " + kind, e);
    }
  }

  /**
   * A job to add with {@link #enqueueMany}.
   *
   * @param payload kind-specific input
   * @param preferredName file name for the artifact's download, or null
   */
  public record NewJob(
      Map<String, Object> payload, String preferredName, int priority, Instant runAfter) {

    /** A job of the default priority, due at once. */
    public NewJob(Map<String, Object> payload, String preferredName) {
      this(payload, preferredName, JobPriority.DEFAULT, null);
    }
  }

  /**
   * Whether any of {@code priorities} is above the default: then the owner claims from the head.
   */
  private static boolean aboveDefault(Short[] priorities) {
    for (Short p : priorities) {
      if (p > JobPriority.DEFAULT) {
        return true;
      }
    }
    return false;
  }

  /** The most jobs {@link #enqueueBatch} takes at once. */
  public static final int MAX_REQUEST_BATCH = 1000;

  /**
   * A job of a batch.
   *
   * @param payload kind-specific input
   * @param preferredName file name for the artifact's download, or null
   * @param idempotencyKey 1 to 200 characters chosen by the caller, or null
   * @param priority {@value JobPriority#MIN} to {@value JobPriority#MAX}, higher first
   */
  public record BatchJob(
      Map<String, Object> payload,
      String preferredName,
      String idempotencyKey,
      int priority,
      Instant runAfter,
      String callbackUrl,
      String traceparent) {

    /** A job of the default priority, due at once. */
    public BatchJob(Map<String, Object> payload, String preferredName, String idempotencyKey) {
      this(payload, preferredName, idempotencyKey, JobPriority.DEFAULT, null, null, null);
    }

    /** A job without a callback. */
    public BatchJob(
        Map<String, Object> payload,
        String preferredName,
        String idempotencyKey,
        int priority,
        Instant runAfter) {
      this(payload, preferredName, idempotencyKey, priority, runAfter, null, null);
    }
  }

  /**
   * What became of one job of a batch.
   *
   * @param uid the job: the new one, or for a key used before the first job with that key
   * @param created whether it was created by this call
   * @param status its status ({@code pending} when created)
   */
  public record BatchOutcome(UUID uid, boolean created, JobStatus status) {}

  /**
   * A batch refused because one of its keys was used before for a different request; nothing of it
   * was added.
   *
   * @param index the job's place in the batch
   * @param firstUid the job that holds the key
   */
  public static final class KeyReusedException extends RuntimeException {
    private final int index;
    private final UUID firstUid;

    KeyReusedException(int index, UUID firstUid) {
      super("idempotency key of job " + index + " is held by job " + firstUid);
      this.index = index;
      this.firstUid = firstUid;
    }

    /** The job's place in the batch. */
    public int index() {
      return index;
    }

    /** The job that holds the key. */
    public UUID firstUid() {
      return firstUid;
    }
  }

  /**
   * Adds up to {@link #MAX_REQUEST_BATCH} pending jobs of one kind and owner in one transaction, in
   * list order. A job whose idempotency key the owner used before for the same request is not added
   * again: its outcome names the first job. The keys within a batch must differ.
   *
   * @return one outcome per job, in list order
   * @throws KeyReusedException when a key was used before for a different request; nothing is added
   *     then
   * @throws IllegalArgumentException when an argument is malformed; nothing is added then
   */
  public List<BatchOutcome> enqueueBatch(
      String kind, List<BatchJob> jobs, String ownerKind, String ownerId) {
    return enqueueBatch(kind, jobs, ownerKind, ownerId, false);
  }

  /**
   * {@link #enqueueBatch(String, List, String, String)}; with {@code quotaExempt} false, the
   * owner's pending quota holds for the jobs the batch adds, together.
   *
   * @throws QuotaExceededException when they would take the owner over its pending quota; nothing
   *     is added then
   */
  public List<BatchOutcome> enqueueBatch(
      String kind, List<BatchJob> jobs, String ownerKind, String ownerId, boolean quotaExempt) {
    requireOwnerAndKind(kind, ownerKind, ownerId);
    if (jobs.isEmpty() || jobs.size() > MAX_REQUEST_BATCH) {
      throw new IllegalArgumentException("a batch holds 1 to " + MAX_REQUEST_BATCH + " jobs");
    }
    int n = jobs.size();
    UUID[] uids = new UUID[n];
    String[] payloads = new String[n];
    String[] names = new String[n];
    String[] keys = new String[n];
    Short[] priorities = new Short[n];
    Instant[] runAfter = new Instant[n];
    String[] callbackUrls = new String[n];
    String[] traceparents = new String[n];
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < n; i++) {
      BatchJob job = jobs.get(i);
      requireJob(job.payload(), job.preferredName());
      priorities[i] = (short) JobPriority.check(job.priority());
      runAfter[i] = job.runAfter();
      callbackUrls[i] = job.callbackUrl();
      traceparents[i] = job.traceparent();
      String key = job.idempotencyKey();
      if (key != null) {
        if (ownerKind == null) {
          throw new IllegalArgumentException("an idempotency key needs an owner");
        }
        if (key.isBlank() || key.length() > 200) {
          throw new IllegalArgumentException("idempotency key must be 1 to 200 characters");
        }
        if (!seen.add(key)) {
          throw new IllegalArgumentException("two jobs of the batch have the same idempotency key");
        }
      }
      uids[i] = JobIds.next();
      payloads[i] = JsonCodec.encode(job.payload());
      names[i] = job.preferredName();
      keys[i] = key;
    }
    if (seen.isEmpty()) {
      // No job carries a key, so none can be a replay: every job is new, in one statement.
      insertMany(
          kind,
          uids,
          payloads,
          names,
          priorities,
          runAfter,
          callbackUrls,
          traceparents,
          ownerKind,
          ownerId,
          quotaExempt);
      return Arrays.stream(uids)
          .map(uid -> new BatchOutcome(uid, true, JobStatus.PENDING))
          .toList();
    }
    // Two tries: a first job may be swept between the insert and the lookup, freeing its key.
    for (int attempt = 0; attempt < 2; attempt++) {
      List<BatchOutcome> outcomes =
          tryEnqueueBatch(
              kind,
              uids,
              payloads,
              names,
              keys,
              priorities,
              runAfter,
              callbackUrls,
              traceparents,
              ownerKind,
              ownerId,
              quotaExempt);
      if (outcomes != null) {
        int created = (int) outcomes.stream().filter(BatchOutcome::created).count();
        if (created > 0) {
          metrics.enqueued(kind, created);
          enqueued.fire(new JobsEnqueued(kind, null, aboveDefault(priorities)));
        }
        return outcomes;
      }
      for (int i = 0; i < n; i++) {
        uids[i] = JobIds.next();
      }
    }
    throw new IllegalStateException("idempotency keys of a batch keep changing hands");
  }

  /** One transaction of {@link #enqueueBatch}; null when a key changed hands meanwhile. */
  private List<BatchOutcome> tryEnqueueBatch(
      String kind,
      UUID[] uids,
      String[] payloads,
      String[] names,
      String[] keys,
      Short[] priorities,
      Instant[] runAfter,
      String[] callbackUrls,
      String[] traceparents,
      String ownerKind,
      String ownerId,
      boolean quotaExempt) {
    int n = uids.length;
    OffsetDateTime[][] times = runAfterArrays(runAfter);
    int limit = quotaExempt || ownerKind == null ? 0 : pendingQuota(kind);
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try {
        if (limit > 0) {
          lockQuota(c, kind, ownerKind, ownerId);
        }
        Set<UUID> inserted = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement(JOB_INSERT_BATCH)) {
          bindNewJobs(c, ps, kind, ownerKind, ownerId, uids, payloads, names);
          ps.setArray(12, c.createArrayOf("text", keys));
          ps.setArray(13, c.createArrayOf("text", shardsOf(kind, uids)));
          ps.setArray(14, c.createArrayOf("smallint", priorities));
          ps.setArray(15, c.createArrayOf("timestamptz", times[0]));
          ps.setArray(16, c.createArrayOf("timestamptz", times[1]));
          ps.setArray(17, c.createArrayOf("text", callbackUrls));
          ps.setArray(18, c.createArrayOf("text", traceparents));
          ps.setInt(19, runningQuota(kind));
          try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              inserted.add(rs.getObject(1, UUID.class));
            }
          }
        }
        BatchOutcome[] outcomes = new BatchOutcome[n];
        List<String> replayKeys = new ArrayList<>();
        List<String> replayPayloads = new ArrayList<>();
        List<Integer> replayIndex = new ArrayList<>();
        for (int i = 0; i < n; i++) {
          if (inserted.contains(uids[i])) {
            outcomes[i] = new BatchOutcome(uids[i], true, JobStatus.PENDING);
          } else {
            replayKeys.add(keys[i]);
            replayPayloads.add(payloads[i]);
            replayIndex.add(i);
          }
        }
        if (!replayKeys.isEmpty()) {
          try (PreparedStatement ps = c.prepareStatement(JOB_GET_BATCH_REPLAYS)) {
            ps.setString(1, kind);
            ps.setArray(2, c.createArrayOf("text", replayKeys.toArray()));
            ps.setArray(3, c.createArrayOf("text", replayPayloads.toArray()));
            ps.setString(4, ownerKind);
            ps.setString(5, ownerId);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                int i = replayIndex.get(rs.getInt(1) - 1);
                UUID first = rs.getObject(2, UUID.class);
                if (!rs.getBoolean(4)) {
                  throw new KeyReusedException(i, first);
                }
                outcomes[i] =
                    new BatchOutcome(
                        first, false, JobStatus.fromDbValue(rs.getString(3)).orElseThrow());
              }
            }
          }
          for (BatchOutcome outcome : outcomes) {
            if (outcome == null) {
              c.rollback();
              return null;
            }
          }
        }
        if (limit > 0 && !inserted.isEmpty()) {
          checkQuota(c, kind, ownerKind, ownerId, limit);
        }
        c.commit();
        return List.of(outcomes);
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(true);
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not enqueue a batch of kind " + kind, e);
    }
  }

  /**
   * {@link JobReads#getJob}, kept here because a test that enqueues a job reads it back through the
   * queue it enqueued on (some 150 places); the code under src/main reads through {@link JobReads}.
   */
  public Optional<Job> getJob(UUID uid) {
    return reads.getJob(uid);
  }

  private static void requireOwnerAndKind(String kind, String ownerKind, String ownerId) {
    requireKind(kind);
    if ((ownerKind == null) != (ownerId == null)) {
      throw new IllegalArgumentException("owner kind and owner id go together: give both or none");
    }
    requireLength("owner kind", ownerKind, MAX_OWNER_LENGTH);
    requireLength("owner id", ownerId, MAX_OWNER_LENGTH);
  }

  private static void requireJob(Map<String, Object> payload, String preferredName) {
    if (payload == null) {
      throw new IllegalArgumentException("payload is required (use an empty object for none)");
    }
    requireLength("preferred name", preferredName, MAX_NAME_LENGTH);
  }

  private static void requireKind(String kind) {
    if (kind == null || !KIND.matcher(kind).matches()) {
      throw new IllegalArgumentException(
          "kind must be 1 to 40 lower-case letters, digits or '_', starting with a letter: "
              + kind);
    }
  }

  private static void requireLength(String what, String value, int max) {
    if (value != null && (value.isBlank() || value.length() > max)) {
      throw new IllegalArgumentException(
          what + " must be non-blank and at most " + max + " characters");
    }
  }
}
