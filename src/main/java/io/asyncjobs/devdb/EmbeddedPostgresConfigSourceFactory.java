package io.asyncjobs.devdb;

import io.smallrye.config.ConfigSourceContext;
import io.smallrye.config.ConfigSourceFactory;
import io.smallrye.config.ConfigValue;
import io.smallrye.config.common.MapBackedConfigSource;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.config.spi.ConfigSource;

/**
 * Points the datasource at an embedded PostgreSQL when {@code jobs.embedded-db.enabled} is true
 * (dev mode and tests). Runs while configuration is assembled, before the datasource and Flyway
 * start. Without that property it does nothing and never loads the embedded database's classes,
 * which the packaged application does not contain.
 */
public class EmbeddedPostgresConfigSourceFactory implements ConfigSourceFactory {

  /**
   * Below environment variables (300) and system properties (400), above application.properties
   * (250): an explicit datasource URL from the environment still wins.
   */
  private static final int ORDINAL = 275;

  @Override
  public Iterable<ConfigSource> getConfigSources(ConfigSourceContext context) {
    if (!"true".equalsIgnoreCase(value(context, "jobs.embedded-db.enabled", "false"))) {
      return List.of();
    }
    return List.of(
        new MapBackedConfigSource(
            "embedded PostgreSQL",
            Map.of(
                "quarkus.datasource.jdbc.url",
                startServer(context),
                "quarkus.datasource.username",
                EmbeddedPostgresLauncher.USER,
                "quarkus.datasource.password",
                ""),
            ORDINAL) {});
  }

  /**
   * Starts the embedded server (once per JVM) and returns its JDBC URL. The native executable
   * replaces this method ({@link EmbeddedPostgresConfigSourceFactorySubstitution}): its signature
   * names no class of the embedded database library, so the native build can resolve it without
   * that library, and nothing in the executable reaches {@link EmbeddedPostgresLauncher}.
   */
  static String startServer(ConfigSourceContext context) {
    Path dataDir = Path.of(value(context, "jobs.embedded-db.data-dir", ".dev/postgres/data"));
    Path workDir = Path.of(value(context, "jobs.embedded-db.work-dir", ".dev/postgres"));
    boolean clean = "true".equalsIgnoreCase(value(context, "jobs.embedded-db.clean", "false"));
    return EmbeddedPostgresLauncher.startOnce(dataDir, workDir, clean);
  }

  private static String value(ConfigSourceContext context, String name, String fallback) {
    ConfigValue value = context.getValue(name);
    return value == null || value.getValue() == null ? fallback : value.getValue();
  }
}
