package io.asyncjobs.api;

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
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Reads the figures of the service cards: two grouped queries over the jobs table. */
@ApplicationScoped
public class ServiceCards {

  /** CardTotals: per kind, counts by status, sums, last-hour percentiles, oldest pending. */
  private static final String CARD_TOTALS =
      """
      SELECT kind,
             count(*) FILTER (WHERE status = 'pending'),
             count(*) FILTER (WHERE status = 'running'),
             count(*) FILTER (WHERE status = 'done'),
             count(*) FILTER (WHERE status = 'failed'),
             count(*) FILTER (WHERE status IN ('done', 'failed') AND completed_at >= ?),
             percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms)
               FILTER (WHERE status = 'done' AND completed_at >= ?),
             percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms)
               FILTER (WHERE status = 'done' AND completed_at >= ?),
             coalesce(sum(bytes_in), 0), coalesce(sum(bytes_out), 0), coalesce(sum(item_count), 0),
             min(created_at) FILTER (WHERE status = 'pending')
        FROM jobs
       GROUP BY kind
      """;

  /** CardMinutes: per kind and minute of the last hour, jobs finished in that minute. */
  private static final String CARD_MINUTES =
      """
      SELECT kind, floor(extract(epoch FROM (completed_at - ?::timestamptz)) / 60)::int, count(*)
        FROM jobs
       WHERE status IN ('done', 'failed') AND completed_at >= ? AND completed_at < ?
       GROUP BY 1, 2
      """;

  private final AgroalDataSource dataSource;
  private final Clock clock;

  ServiceCards(AgroalDataSource dataSource, Clock clock) {
    this.dataSource = dataSource;
    this.clock = clock;
  }

  /** The figures of every kind that has jobs; kinds without any are absent. */
  public Map<String, Figures> figures() {
    Instant now = clock.now();
    OffsetDateTime hourAgo =
        OffsetDateTime.ofInstant(now.minus(Duration.ofHours(1)), ZoneOffset.UTC);
    Map<String, Figures> byKind = new HashMap<>();
    try (Connection c = dataSource.getConnection()) {
      try (PreparedStatement ps = c.prepareStatement(CARD_TOTALS)) {
        ps.setObject(1, hourAgo);
        ps.setObject(2, hourAgo);
        ps.setObject(3, hourAgo);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            OffsetDateTime oldest = rs.getObject(12, OffsetDateTime.class);
            byKind.put(
                rs.getString(1),
                new Figures(
                    new ServiceCard.Counts(
                        rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5)),
                    rs.getLong(6),
                    new Long[60],
                    new ServiceCard.Percentiles(
                        rs.getObject(7, Double.class), rs.getObject(8, Double.class)),
                    rs.getLong(9),
                    rs.getLong(10),
                    rs.getLong(11),
                    oldest == null
                        ? null
                        : Math.max(0, Duration.between(oldest.toInstant(), now).toSeconds())));
          }
        }
      }
      try (PreparedStatement ps = c.prepareStatement(CARD_MINUTES)) {
        ps.setObject(1, hourAgo);
        ps.setObject(2, hourAgo);
        ps.setObject(3, OffsetDateTime.ofInstant(now, ZoneOffset.UTC));
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            Figures figures = byKind.get(rs.getString(1));
            int minute = rs.getInt(2);
            if (figures != null && minute >= 0 && minute < 60) {
              figures.perMinute[minute] = rs.getLong(3);
            }
          }
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not read the service cards", e);
    }
    return byKind;
  }

  /** The figures of one kind, before they are joined with its name and settings. */
  public record Figures(
      ServiceCard.Counts counts,
      long completedLastHour,
      Long[] perMinute,
      ServiceCard.Percentiles durationMs,
      long bytesIn,
      long bytesOut,
      long items,
      Long oldestPendingAgeSeconds) {

    /** No jobs at all. */
    public static Figures none() {
      return new Figures(
          new ServiceCard.Counts(0, 0, 0, 0),
          0,
          new Long[60],
          new ServiceCard.Percentiles(null, null),
          0,
          0,
          0,
          null);
    }

    /** The per-minute counts with empty minutes as 0. */
    public List<Long> perMinuteList() {
      List<Long> out = new ArrayList<>(60);
      Arrays.stream(perMinute).forEach(v -> out.add(v == null ? 0L : v));
      return out;
    }
  }
}
