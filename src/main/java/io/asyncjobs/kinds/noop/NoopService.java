package io.asyncjobs.kinds.noop;

import io.agroal.api.AgroalDataSource;
import io.asyncjobs.engine.JobService;
import io.asyncjobs.queue.Job;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Map;

/**
 * A diagnostic kind that does no work: it returns at once, after {@code sleep_ms}, or fails when
 * the payload sets {@code fail}; with {@code record: true} it records each execution in {@code
 * noop_executions}, so tests can see a job's work take effect twice. Benchmarks drive the engine
 * with it and operators can smoke-test a deployment with it. Off unless {@code
 * jobs.services.noop.enabled=true}.
 */
@ApplicationScoped
public class NoopService extends JobService {

  /** Where executions are recorded; absent in a service made by hand. */
  @Inject AgroalDataSource dataSource;

  /** Longest sleep a payload may ask for. */
  public static final long MAX_SLEEP_MS = 3_600_000;

  @Override
  public String kind() {
    return "noop";
  }

  @Override
  public String title() {
    return "No-op (diagnostics)";
  }

  @Override
  public boolean enabledByDefault() {
    return false;
  }

  @Override
  protected Map<String, Object> process(Job job) throws Exception {
    long sleepMs = sleepMs(job.payload);
    if (sleepMs > 0) {
      Thread.sleep(sleepMs);
    }
    Object fail = job.payload.get("fail");
    if (fail != null && !Boolean.FALSE.equals(fail)) {
      throw new IllegalStateException(
          fail instanceof String message ? message : "failed because the payload asked to");
    }
    if (Boolean.TRUE.equals(job.payload.get("record"))) {
      record(job);
    }
    return Map.of("slept_ms", sleepMs, "item_count", 1);
  }

  /**
   * Records this execution, but only while the job is still running under the epoch it was claimed
   * with: like any effect, it must not land once a newer owner holds the job.
   */
  private void record(Job job) throws SQLException {
    if (dataSource == null) {
      throw new IllegalStateException("this noop service cannot record executions");
    }
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO noop_executions (uid, epoch)"
                    + " SELECT uid, epoch FROM jobs"
                    + " WHERE uid = ? AND status = 'running' AND epoch = ?")) {
      ps.setObject(1, job.uid);
      ps.setLong(2, job.epoch);
      ps.executeUpdate();
    }
  }

  @Override
  protected void cleanup(Job job) {
    // A no-op job leaves nothing on disk.
  }

  /** The requested sleep; rejects what is not a whole number from 0 to {@link #MAX_SLEEP_MS}. */
  public static long sleepMs(Map<String, Object> payload) {
    Object value = payload.get("sleep_ms");
    if (value == null) {
      return 0;
    }
    if (!(value instanceof Number n) || n.doubleValue() != n.longValue()) {
      throw new IllegalArgumentException("sleep_ms must be a whole number of milliseconds");
    }
    if (n.longValue() < 0 || n.longValue() > MAX_SLEEP_MS) {
      throw new IllegalArgumentException("sleep_ms must be between 0 and " + MAX_SLEEP_MS);
    }
    return n.longValue();
  }
}
