package io.asyncjobs.bench.peers;

import com.github.kagkarlsson.scheduler.Scheduler;
import com.github.kagkarlsson.scheduler.SchedulerClient;
import com.github.kagkarlsson.scheduler.task.TaskInstance;
import com.github.kagkarlsson.scheduler.task.helper.OneTimeTask;
import com.github.kagkarlsson.scheduler.task.helper.Tasks;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntConsumer;

/**
 * db-scheduler under {@link PeerHarness}. Settings from its README for throughput on PostgreSQL:
 * 10 threads with the lock-and-fetch polling strategy ({@code select for update skip locked}) at
 * its high-throughput fractions (1.0, 4.0: fetch again when 10 or fewer are left, up to 40 at a
 * time), and immediate execution, so that a job scheduled for now through the scheduler wakes it
 * instead of waiting for the next poll (polling interval left at its default of 10 s). A one-time
 * task carries the job's number as its instance id and no data. A Hikari pool of 12 connections.
 */
public final class DbSchedulerDriver implements PeerHarness.Peer {

  /** The table from db-scheduler's own PostgreSQL definition for 16.x. */
  private static final String TABLE =
      """
      CREATE TABLE scheduled_tasks (
        task_name text NOT NULL,
        task_instance text NOT NULL,
        task_data bytea,
        execution_time timestamp with time zone NOT NULL,
        picked boolean NOT NULL,
        picked_by text,
        last_success timestamp with time zone,
        last_failure timestamp with time zone,
        consecutive_failures int,
        last_heartbeat timestamp with time zone,
        version bigint NOT NULL,
        priority smallint,
        PRIMARY KEY (task_name, task_instance)
      );
      CREATE INDEX execution_time_idx ON scheduled_tasks (execution_time);
      CREATE INDEX last_heartbeat_idx ON scheduled_tasks (last_heartbeat);
      CREATE INDEX priority_execution_time_idx ON scheduled_tasks (priority DESC, execution_time ASC);
      """;

  private final HikariDataSource dataSource;
  private final OneTimeTask<Void> noop;
  private final SchedulerClient client;
  private volatile IntConsumer started = i -> {};
  private volatile Scheduler scheduler;

  private DbSchedulerDriver(String jdbcUrl) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(jdbcUrl);
    config.setUsername("postgres");
    config.setMaximumPoolSize(12);
    dataSource = new HikariDataSource(config);
    noop =
        Tasks.oneTime("noop")
            .execute((instance, context) -> started.accept(Integer.parseInt(instance.getId())));
    client = SchedulerClient.Builder.create(dataSource, noop).build();
  }

  @Override
  public void fresh() throws Exception {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute("DROP TABLE IF EXISTS scheduled_tasks");
      s.execute(TABLE);
    }
  }

  @Override
  public void enqueue(int i) {
    // Through the running scheduler when there is one, so that immediate execution sees it.
    Scheduler running = scheduler;
    (running != null ? running : client)
        .scheduleIfNotExists(noop.instance(String.valueOf(i)), Instant.now());
  }

  @Override
  public void enqueueBatch(int from, int count) {
    List<TaskInstance<?>> batch = new ArrayList<>(count);
    for (int i = from; i < from + count; i++) {
      batch.add(noop.instance(String.valueOf(i)));
    }
    client.scheduleBatch(batch, Instant.now());
  }

  @Override
  public AutoCloseable startWorker(IntConsumer started) {
    this.started = started;
    Scheduler s =
        Scheduler.create(dataSource, noop)
            .threads(10)
            .pollUsingLockAndFetch(1.0, 4.0)
            .enableImmediateExecution()
            .build();
    s.start();
    scheduler = s;
    return () -> {
      scheduler = null;
      s.stop();
    };
  }

  @Override
  public boolean unfinished() throws Exception {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT 1 FROM scheduled_tasks LIMIT 1")) {
      return rs.next();
    }
  }

  /** Serves the rounds; BENCH_PEERS_JDBC_URL, _CONTROL and _OUTPUT say where. */
  public static void main(String[] args) throws Exception {
    DbSchedulerDriver driver = new DbSchedulerDriver(System.getenv("BENCH_PEERS_JDBC_URL"));
    try {
      new PeerHarness("db-scheduler", driver, PeerHarness.Settings.fromEnvironment(), 50)
          .serve(
              Path.of(System.getenv("BENCH_PEERS_CONTROL")),
              Path.of(System.getenv("BENCH_PEERS_OUTPUT")),
              Duration.ofMinutes(20));
    } finally {
      driver.dataSource.close();
    }
  }
}
