package io.asyncjobs.queue;

import io.agroal.api.AgroalDataSource;
import io.asyncjobs.time.Clock;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * The statements behind the admin page's service cards. They read the figures without reading
 * history: pending and running jobs from their partial index, finished ones from the totals and
 * per-minute counts the triggers on {@code jobs} keep, and duration percentiles from the latest
 * finished jobs of the last hour through the index on finished rows by completion time. The cost
 * follows the queue, not the retention.
 */
@ApplicationScoped
public class CardQueries {

  /** The most jobs of one kind the duration percentiles are taken over: the latest ones. */
  public static final int PERCENTILE_SAMPLE = 10_000;

  /** CardActive: per kind, pending and running jobs and the oldest pending one. */
  public static final String CARD_ACTIVE =
      """
      SELECT kind,
             count(*) FILTER (WHERE status = 'pending'),
             count(*) FILTER (WHERE status = 'running'),
             min(created_at) FILTER (WHERE status = 'pending')
        FROM jobs
       WHERE status IN ('pending', 'running')
       GROUP BY kind
      """;

  /** CardTotals: per kind and finished status, the jobs and their sums. */
  public static final String CARD_TOTALS =
      "SELECT kind, status, jobs, bytes_in, bytes_out, items FROM job_totals";

  /**
   * CardMinutes: per kind and minute of the last hour, oldest minute 0, jobs finished in it. Kind
   * by kind through the primary key, so that minutes the sweep has not purged yet (two hours' worth
   * normally, a week's after a bulk load) are never read.
   */
  public static final String CARD_MINUTES =
      """
      SELECT k.kind, (extract(epoch FROM (m.minute - ?::timestamptz)) / 60)::int, m.finished
        FROM (SELECT DISTINCT kind FROM job_totals) AS k
       CROSS JOIN LATERAL (
             SELECT minute, finished FROM job_finished_minutes
              WHERE kind = k.kind AND minute >= ? AND minute <= ?
              ORDER BY minute
              LIMIT 60) AS m
      """;

  /**
   * CardDurations: per kind, the median and 95th percentile duration of the latest done jobs of the
   * last hour, at most {@link #PERCENTILE_SAMPLE} of them.
   */
  public static final String CARD_DURATIONS =
      """
      SELECT k.kind, d.p50, d.p95
        FROM job_totals k
       CROSS JOIN LATERAL (
             SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY w.duration_ms) AS p50,
                    percentile_cont(0.95) WITHIN GROUP (ORDER BY w.duration_ms) AS p95
               FROM (SELECT j.duration_ms FROM jobs j
                      WHERE j.kind = k.kind AND j.status = 'done' AND j.completed_at >= ?
                      ORDER BY j.completed_at DESC
                      LIMIT ?) AS w) AS d
       WHERE k.status = 'done' AND d.p50 IS NOT NULL
      """;

  private final AgroalDataSource dataSource;
  private final Clock clock;

  CardQueries(AgroalDataSource dataSource, Clock clock) {
    this.dataSource = dataSource;
    this.clock = clock;
  }

  /** The figures of every kind that has jobs; kinds without any are absent. */
  public Map<String, Figures> figures() {
    Instant now = clock.now();
    OffsetDateTime hourAgo = JobRows.timestamp(now.minus(Duration.ofHours(1)));
    // Sixty whole minutes, the current one last.
    Instant thisMinute = now.truncatedTo(ChronoUnit.MINUTES);
    OffsetDateTime firstMinute = JobRows.timestamp(thisMinute.minus(Duration.ofMinutes(59)));
    Map<String, Builder> byKind = new HashMap<>();
    try (Connection c = dataSource.getConnection()) {
      try (PreparedStatement ps = c.prepareStatement(CARD_ACTIVE);
          ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          Builder b = byKind.computeIfAbsent(rs.getString(1), k -> new Builder());
          b.pending = rs.getLong(2);
          b.running = rs.getLong(3);
          OffsetDateTime oldest = rs.getObject(4, OffsetDateTime.class);
          if (oldest != null) {
            b.oldestPendingAgeSeconds =
                Math.max(0, Duration.between(oldest.toInstant(), now).toSeconds());
          }
        }
      }
      try (PreparedStatement ps = c.prepareStatement(CARD_TOTALS);
          ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          Builder b = byKind.computeIfAbsent(rs.getString(1), k -> new Builder());
          if ("done".equals(rs.getString(2))) {
            b.done = rs.getLong(3);
          } else {
            b.failed = rs.getLong(3);
          }
          b.bytesIn += rs.getLong(4);
          b.bytesOut += rs.getLong(5);
          b.items += rs.getLong(6);
        }
      }
      try (PreparedStatement ps = c.prepareStatement(CARD_MINUTES)) {
        ps.setObject(1, firstMinute);
        ps.setObject(2, firstMinute);
        ps.setObject(3, JobRows.timestamp(thisMinute));
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            Builder b = byKind.get(rs.getString(1));
            int minute = rs.getInt(2);
            if (b != null && minute >= 0 && minute < 60) {
              b.perMinute[minute] = rs.getLong(3);
              b.completedLastHour += rs.getLong(3);
            }
          }
        }
      }
      try (PreparedStatement ps = c.prepareStatement(CARD_DURATIONS)) {
        ps.setObject(1, hourAgo);
        ps.setInt(2, PERCENTILE_SAMPLE);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            Builder b = byKind.get(rs.getString(1));
            if (b != null) {
              b.durations =
                  new Percentiles(rs.getObject(2, Double.class), rs.getObject(3, Double.class));
            }
          }
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not read the service cards", e);
    }
    Map<String, Figures> figures = new HashMap<>();
    byKind.forEach(
        (kind, b) -> {
          if (b.pending + b.running + b.done + b.failed > 0) {
            figures.put(kind, b.build());
          }
        });
    return figures;
  }

  /** One kind's figures as the queries find them. */
  private static final class Builder {
    long pending;
    long running;
    long done;
    long failed;
    long completedLastHour;
    final Long[] perMinute = new Long[60];
    Percentiles durations = new Percentiles(null, null);
    long bytesIn;
    long bytesOut;
    long items;
    Long oldestPendingAgeSeconds;

    Figures build() {
      return new Figures(
          new Counts(pending, running, done, failed),
          completedLastHour,
          perMinute,
          durations,
          bytesIn,
          bytesOut,
          items,
          oldestPendingAgeSeconds);
    }
  }

  /** The figures of one kind, before they are joined with its name and settings. */
  public record Figures(
      Counts counts,
      long completedLastHour,
      Long[] perMinute,
      Percentiles durationMs,
      long bytesIn,
      long bytesOut,
      long items,
      Long oldestPendingAgeSeconds) {

    /** No jobs at all. */
    public static Figures none() {
      return new Figures(
          new Counts(0, 0, 0, 0), 0, new Long[60], new Percentiles(null, null), 0, 0, 0, null);
    }

    /** The per-minute counts with empty minutes as 0. */
    public List<Long> perMinuteList() {
      List<Long> out = new ArrayList<>(60);
      Arrays.stream(perMinute).forEach(v -> out.add(v == null ? 0L : v));
      return out;
    }
  }

  /** Jobs by status. */
  @Schema(name = "JobCounts", description = "Jobs by status")
  public record Counts(long pending, long running, long done, long failed) {}

  /** Two percentiles of a duration, in milliseconds. */
  @Schema(name = "DurationPercentiles", description = "p50 and p95, null without jobs")
  public record Percentiles(
      @Schema(nullable = true) Double p50, @Schema(nullable = true) Double p95) {}
}
