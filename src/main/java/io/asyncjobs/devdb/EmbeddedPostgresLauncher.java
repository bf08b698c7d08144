package io.asyncjobs.devdb;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * Starts the embedded PostgreSQL server of dev mode and tests. Only {@link
 * EmbeddedPostgresConfigSourceFactory} calls it, and only when the embedded database is enabled.
 */
public final class EmbeddedPostgresLauncher {

  /** The superuser the embedded cluster is created with. */
  public static final String USER = "postgres";

  /**
   * Holds the JDBC URL of the server this JVM started. Configuration is assembled several times per
   * JVM and dev mode reloads classes, so a static field would not survive; a system property does.
   */
  static final String URL_PROPERTY = "io.asyncjobs.embedded-db.url";

  private static final Logger LOG = Logger.getLogger(EmbeddedPostgresLauncher.class);

  private EmbeddedPostgresLauncher() {}

  /** Starts the server unless this JVM already did, and returns its JDBC URL. */
  static synchronized String startOnce(Path dataDir, Path workDir, boolean clean) {
    String running = System.getProperty(URL_PROPERTY);
    if (running != null) {
      return running;
    }
    EmbeddedPostgres pg = start(dataDir, workDir, clean);
    String url = jdbcUrl(pg);
    System.setProperty(URL_PROPERTY, url);
    LOG.infof("Embedded PostgreSQL on %s, data in %s", url, dataDir.toAbsolutePath());
    return url;
  }

  /**
   * Starts a server on {@code dataDir}, creating the cluster when the folder holds none. Its JVM
   * shutdown hook stops it; {@code clean} also deletes the folder then.
   */
  public static EmbeddedPostgres start(Path dataDir, Path workDir, boolean clean) {
    try {
      Files.createDirectories(dataDir);
      Files.createDirectories(workDir);
      stopLeftoverPostmaster(dataDir);
      return EmbeddedPostgres.builder()
          .setDataDirectory(dataDir)
          .setCleanDataDirectory(clean)
          .setOverrideWorkingDirectory(workDir.toFile())
          .setServerConfig("listen_addresses", "127.0.0.1")
          .setServerConfig("max_connections", "200")
          .setPGStartupWait(Duration.ofSeconds(30))
          .start();
    } catch (IOException e) {
      throw new UncheckedIOException("could not start the embedded PostgreSQL in " + dataDir, e);
    }
  }

  /** The JDBC URL of a started server, on loopback. */
  public static String jdbcUrl(EmbeddedPostgres pg) {
    return "jdbc:postgresql://127.0.0.1:" + pg.getPort() + "/postgres";
  }

  /**
   * A dev-mode JVM that was killed (kill -9, a closed terminal) leaves its postmaster running on
   * the data folder, and a new one could not start there. Stop it first.
   */
  private static void stopLeftoverPostmaster(Path dataDir) throws IOException {
    Path pidFile = dataDir.resolve("postmaster.pid");
    if (!Files.exists(pidFile)) {
      return;
    }
    List<String> lines = Files.readAllLines(pidFile);
    Optional<ProcessHandle> postmaster =
        lines.isEmpty() ? Optional.empty() : parsePid(lines.get(0)).flatMap(ProcessHandle::of);
    if (postmaster.isEmpty() || !postmaster.get().isAlive() || !isPostgres(postmaster.get())) {
      return;
    }
    LOG.warnf("Stopping a PostgreSQL left running on %s (pid %d)", dataDir, postmaster.get().pid());
    postmaster.get().destroy();
    try {
      postmaster.get().onExit().get(20, TimeUnit.SECONDS);
    } catch (Exception e) {
      postmaster.get().destroyForcibly();
    }
  }

  private static Optional<Long> parsePid(String line) {
    try {
      return Optional.of(Long.parseLong(line.trim()));
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }

  private static boolean isPostgres(ProcessHandle process) {
    return process.info().command().map(c -> c.contains("postgres")).orElse(false);
  }
}
