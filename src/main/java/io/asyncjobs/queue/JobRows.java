package io.asyncjobs.queue;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * Reads {@link Job}s from plain JDBC result sets, for the statements that bypass Hibernate: the
 * engine's claims and the status read every poll makes; and the uids (with the status written) that
 * the engine's writes answer with.
 */
public final class JobRows {

  /** Every column of a job, in the order {@link #read} expects. */
  public static final String COLUMNS =
      "uid, kind, status, owner_kind, owner_id, preferred_name, payload::text, result::text,"
          + " error, retry_count, created_at, started_at, completed_at, updated_at, duration_ms,"
          + " last_accessed_at, expires_at, bytes_in, bytes_out, item_count, epoch, progress,"
          + " progress_items, progress_at, cancel_requested, priority,"
          + " run_after, attempt, attempts::text, callback_url, callback::text, callback_due,"
          + " traceparent, delayed_until";

  /**
   * {@link #COLUMNS} without the payload, which a job's view never shows: {@link #read} leaves it
   * empty. Listings and event streams read these, so that a large payload costs nothing there.
   */
  public static final String VIEW_COLUMNS = COLUMNS.replace("payload::text", "NULL::text");

  private JobRows() {}

  /** Reads a job whose {@link #COLUMNS} start after {@code offset} columns. */
  public static Job read(ResultSet rs, int offset) throws SQLException {
    Job job = new Job();
    job.uid = rs.getObject(offset + 1, UUID.class);
    job.kind = rs.getString(offset + 2);
    job.status = JobStatus.fromDbValue(rs.getString(offset + 3)).orElseThrow();
    job.ownerKind = rs.getString(offset + 4);
    job.ownerId = rs.getString(offset + 5);
    job.preferredName = rs.getString(offset + 6);
    job.payload = JsonCodec.decode(rs.getString(offset + 7));
    job.result = JsonCodec.decode(rs.getString(offset + 8));
    job.error = rs.getString(offset + 9);
    job.retryCount = rs.getInt(offset + 10);
    job.createdAt = instant(rs, offset + 11);
    job.startedAt = instant(rs, offset + 12);
    job.completedAt = instant(rs, offset + 13);
    job.updatedAt = instant(rs, offset + 14);
    job.durationMs = rs.getObject(offset + 15, Long.class);
    job.lastAccessedAt = instant(rs, offset + 16);
    job.expiresAt = instant(rs, offset + 17);
    job.bytesIn = rs.getObject(offset + 18, Long.class);
    job.bytesOut = rs.getObject(offset + 19, Long.class);
    job.itemCount = rs.getObject(offset + 20, Long.class);
    job.epoch = rs.getObject(offset + 21, Long.class);
    job.progress = rs.getObject(offset + 22, Double.class);
    job.progressItems = rs.getObject(offset + 23, Long.class);
    job.progressAt = instant(rs, offset + 24);
    job.cancelRequested = rs.getBoolean(offset + 25);
    job.priority = rs.getInt(offset + 26);
    job.runAfter = instant(rs, offset + 27);
    job.attempt = rs.getInt(offset + 28);
    job.attempts = JsonCodec.decodeList(rs.getString(offset + 29));
    job.callbackUrl = rs.getString(offset + 30);
    job.callback = JsonCodec.decode(rs.getString(offset + 31));
    job.callbackDue = instant(rs, offset + 32);
    job.traceparent = rs.getString(offset + 33);
    job.delayedUntil = instant(rs, offset + 34);
    return job;
  }

  /** The {@code timestamptz} at {@code column}, or null. */
  static Instant instant(ResultSet rs, int column) throws SQLException {
    OffsetDateTime value = rs.getObject(column, OffsetDateTime.class);
    return value == null ? null : value.toInstant();
  }

  /** Runs a query whose columns are a uid and a status, and collects them. */
  static Map<UUID, JobStatus> statuses(PreparedStatement ps) throws SQLException {
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
  static Set<UUID> uids(PreparedStatement ps) throws SQLException {
    Set<UUID> uids = new HashSet<>();
    try (ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        uids.add(rs.getObject(1, UUID.class));
      }
    }
    return uids;
  }

  /** An instant as the {@code timestamptz} parameter every statement on {@code jobs} binds. */
  public static OffsetDateTime timestamp(Instant instant) {
    return OffsetDateTime.ofInstant(instant, ZoneOffset.UTC);
  }
}
