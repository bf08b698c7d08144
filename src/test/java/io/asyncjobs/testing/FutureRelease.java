package io.asyncjobs.testing;

import java.util.Map;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;

/**
 * The schema as a release newer than this build leaves it: this build's migrations and one more,
 * {@code V999__future.sql} (in {@code src/test/resources/db/future}), applied by Flyway and
 * recorded in {@code flyway_schema_history} as that release's Flyway records it. What a rollback
 * with {@code kubectl rollout undo} starts the previous release on.
 */
public final class FutureRelease {

  /** The version of the migration this build does not know. */
  public static final String VERSION = "999";

  private FutureRelease() {}

  /** Migrates the database as the newer release does at start. */
  public static void migrate(DataSource dataSource) {
    Flyway.configure()
        .dataSource(dataSource)
        .locations("classpath:db/migration", "classpath:db/future")
        // As the service's MigrationLock does: our migrations build indexes concurrently.
        .configuration(Map.of("flyway.postgresql.transactional.lock", "false"))
        .load()
        .migrate();
  }

  /**
   * Takes the newer release's migration back out, so that the next test finds this build's schema.
   */
  public static void undo(Database db) {
    db.update("DROP TABLE IF EXISTS future_things");
    db.update("ALTER TABLE jobs DROP COLUMN IF EXISTS future_note");
    db.update("DELETE FROM flyway_schema_history WHERE version = ?", VERSION);
  }
}
