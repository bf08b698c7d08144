package io.asyncjobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.asyncjobs.devdb.EmbeddedPostgresLauncher;
import io.asyncjobs.testing.ServiceProcess;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The class-data archive the JVM image makes at build (src/main/docker/app-cds.sh, run by
 * Dockerfile.jvm): made from the packaged jar with no database at hand, and then used by a real
 * start. {@code -Xshare:on} makes the JVM refuse to start when it cannot map the archive, which a
 * start with the image's {@code -Xshare:auto} would pass over in silence.
 */
class AppCdsIT {

  private EmbeddedPostgres postgres;
  private Path root;

  @BeforeEach
  void startDatabase() throws IOException {
    assumeTrue(
        ServiceProcess.command().contains("-jar"),
        "the archive is the JVM image's; a -Dnative build has no jar to archive");
    root = Files.createDirectories(Path.of("target", "app-cds"));
    postgres =
        EmbeddedPostgresLauncher.start(
            Files.createTempDirectory(root, "pg"), Path.of("target", "embedded-postgres"), true);
  }

  @AfterEach
  void stopDatabase() throws IOException {
    if (postgres != null) {
      postgres.close();
    }
  }

  @Test
  void shouldMakeAnArchiveWithoutADatabaseThatAStartThenMaps() throws Exception {
    Path app = copyOfThePackagedApp();

    Process script =
        new ProcessBuilder("bash", "src/main/docker/app-cds.sh", app.toString())
            .redirectErrorStream(true)
            .redirectOutput(root.resolve("app-cds-script.log").toFile())
            .start();
    assertThat(script.waitFor(180, TimeUnit.SECONDS)).as("the script ended").isTrue();
    assertThat(script.exitValue())
        .as("app-cds.sh: %s", Files.readString(root.resolve("app-cds-script.log")))
        .isZero();
    Path archive = app.resolve("app-cds.jsa");
    assertThat(Files.size(archive)).as("the archive's size").isGreaterThan(10L << 20);

    Path loaded = root.resolve("classes-loaded.txt");
    List<String> command =
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m",
            "-XX:SharedArchiveFile=" + archive.toAbsolutePath(),
            "-Xshare:on",
            "-Xlog:class+load=info:file=" + loaded.toAbsolutePath(),
            "-jar",
            app.resolve("quarkus-run.jar").toAbsolutePath().toString());
    Map<String, String> env =
        ServiceProcess.environment(
            EmbeddedPostgresLauncher.jdbcUrl(postgres), Files.createTempDirectory(root, "data"));
    try (ServiceProcess replica = ServiceProcess.start("app-cds", env, command)) {
      replica.awaitReady(Duration.ofSeconds(120));
    }
    try (Stream<String> lines = Files.lines(loaded)) {
      List<String> fromArchive =
          lines.filter(line -> line.contains("source: shared objects file (top)")).toList();
      assertThat(fromArchive)
          .as("classes the start took from the archive")
          .hasSizeGreaterThan(5_000)
          .anyMatch(line -> line.contains(" io.asyncjobs.engine."))
          .anyMatch(line -> line.contains(" org.flywaydb.core."));
    }
  }

  /** target/quarkus-app copied, so the archive written beside it is this test's alone. */
  private Path copyOfThePackagedApp() throws IOException {
    Path source = Path.of("target", "quarkus-app");
    Path copy = Files.createTempDirectory(root, "quarkus-app");
    try (Stream<Path> files = Files.walk(source)) {
      for (Path file : files.toList()) {
        Path target = copy.resolve(source.relativize(file).toString());
        if (Files.isDirectory(file)) {
          Files.createDirectories(target);
        } else if (!file.getFileName().toString().endsWith(".jsa")) {
          Files.copy(file, target);
        }
      }
    }
    return copy;
  }
}
