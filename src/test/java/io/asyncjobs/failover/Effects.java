package io.asyncjobs.failover;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * What a fault did to the jobs, counted from the jobs table and the noop kind's execution record:
 * every execution of every job, with its start, end and replica, and whether its effect landed.
 *
 * @param jobs jobs enqueued
 * @param lost jobs neither done nor failed at the end
 * @param failed jobs that failed
 * @param ranTwice jobs executed more than once
 * @param overlapping jobs with two executions that overlapped in time
 * @param runningAtFaults jobs with an execution under way when a fault struck (within 250 ms)
 * @param effectsNotOnce done jobs whose effect did not land exactly once
 * @param unknownEnds executions whose end was never recorded, on a replica that did not die
 */
record Effects(
    long jobs,
    long lost,
    long failed,
    long ranTwice,
    long overlapping,
    long runningAtFaults,
    long effectsNotOnce,
    long unknownEnds) {

  /**
   * Counts the effects.
   *
   * @param faults when each fault struck
   * @param died replicas that were killed, and when: their executions without an end ended then
   */
  static Effects count(Connection c, List<Instant> faults, Map<String, Instant> died)
      throws SQLException {
    String ends =
        "(SELECT e.*, COALESCE(e.ended_at, d.t, 'infinity') AS until FROM noop_executions e"
            + " LEFT JOIN unnest(?::text[], ?::timestamptz[]) AS d(replica, t)"
            + " ON d.replica = e.replica)";
    String[] replicas = died.keySet().toArray(String[]::new);
    Timestamp[] times = died.values().stream().map(Timestamp::from).toArray(Timestamp[]::new);
    return new Effects(
        scalar(c, "SELECT count(*) FROM jobs"),
        scalar(c, "SELECT count(*) FROM jobs WHERE status NOT IN ('done', 'failed')"),
        scalar(c, "SELECT count(*) FROM jobs WHERE status = 'failed'"),
        scalar(
            c,
            "SELECT count(*) FROM (SELECT uid FROM noop_executions GROUP BY uid"
                + " HAVING count(*) > 1) t"),
        scalar(
            c,
            "SELECT count(DISTINCT a.uid) FROM "
                + ends
                + " a JOIN "
                + ends
                + " b ON a.uid = b.uid AND a.id < b.id"
                + " WHERE a.started_at < b.until AND b.started_at < a.until",
            c.createArrayOf("text", replicas),
            c.createArrayOf("timestamptz", times),
            c.createArrayOf("text", replicas),
            c.createArrayOf("timestamptz", times)),
        scalar(
            c,
            "SELECT count(DISTINCT e.uid) FROM "
                + ends
                + " e, unnest(?::timestamptz[]) AS f(t)"
                + " WHERE e.started_at <= f.t + interval '250 ms'"
                + " AND e.until >= f.t - interval '250 ms'",
            c.createArrayOf("text", replicas),
            c.createArrayOf("timestamptz", times),
            c.createArrayOf(
                "timestamptz", faults.stream().map(Timestamp::from).toArray(Timestamp[]::new))),
        scalar(
            c,
            "SELECT count(*) FROM jobs j WHERE status = 'done' AND (SELECT count(*)"
                + " FROM noop_executions e WHERE e.uid = j.uid AND e.executed_at IS NOT NULL) <> 1"),
        scalar(
            c,
            "SELECT count(*) FROM noop_executions WHERE ended_at IS NULL"
                + " AND NOT (replica = ANY (?::text[]))",
            c.createArrayOf("text", replicas)));
  }

  /** One line for the report. */
  String line(String scenario, String recovery) {
    return String.format(
        "| %s | %d | %d | %d | %d | %d | %d | %d | %s |",
        scenario,
        jobs,
        lost,
        failed,
        ranTwice,
        overlapping,
        runningAtFaults,
        effectsNotOnce,
        recovery);
  }

  private static long scalar(Connection c, String sql, Object... args) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}
