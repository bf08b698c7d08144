package io.asyncjobs.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.FutureRelease;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The admin CLI's schema check: a schema that lacks a migration of this build is refused, one that
 * a newer release migrated further is accepted (the CLI of the previous release runs on it after
 * {@code kubectl rollout undo}).
 */
@QuarkusTest
class SchemaCheckTest {

  @Inject SchemaCheck schema;
  @Inject Database db;

  @Test
  void shouldAcceptASchemaThatANewerReleaseMigrated() {
    FutureRelease.migrate(db.dataSource());
    try {
      assertThat(schema.problem()).isEmpty();
    } finally {
      FutureRelease.undo(db);
    }
  }

  @Test
  void shouldRefuseASchemaThatLacksAMigrationOfThisBuild() {
    // The last migration as if not yet applied: its history row is set aside and put back.
    List<Map<String, Object>> last =
        db.query(
            "SELECT * FROM flyway_schema_history WHERE installed_rank ="
                + " (SELECT max(installed_rank) FROM flyway_schema_history)");
    assertThat(last).hasSize(1);
    Object rank = last.get(0).get("installed_rank");
    db.update(
        "CREATE TABLE set_aside_history AS SELECT * FROM flyway_schema_history"
            + " WHERE installed_rank = ?",
        rank);
    db.update("DELETE FROM flyway_schema_history WHERE installed_rank = ?", rank);
    try {
      assertThat(schema.problem())
          .hasValueSatisfying(
              problem -> assertThat(problem).contains("the database schema lacks 1 migration"));
    } finally {
      db.update("INSERT INTO flyway_schema_history SELECT * FROM set_aside_history");
      db.update("DROP TABLE set_aside_history");
    }
  }
}
