package io.asyncjobs.testing;

import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.asyncjobs.files.Trees;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * A real Prometheus, Debian's {@code /usr/bin/prometheus}, run as a child process on a loopback
 * port, scraping one target every second and evaluating one rules file every second.
 */
public final class PrometheusServer implements AutoCloseable {

  public static final Path PROMETHEUS = Path.of("/usr/bin/prometheus");
  public static final Path PROMTOOL = Path.of("/usr/bin/promtool");

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private final Process process;
  private final Path log;
  private final URI base;

  private PrometheusServer(Process process, Path log, int port) {
    this.process = process;
    this.log = log;
    this.base = URI.create("http://127.0.0.1:" + port);
  }

  /** Makes sure both Prometheus binaries are there (see {@link DebianPackages}). */
  public static void requireInstalled() {
    DebianPackages.require(
        "The dashboard checks", Map.of(PROMETHEUS, "prometheus", PROMTOOL, "prometheus"));
  }

  /**
   * Starts Prometheus with its config, data and log under {@code dir} (data from earlier runs is
   * deleted first), scraping {@code http://127.0.0.1:<targetPort><metricsPath>}.
   */
  public static PrometheusServer start(Path dir, int targetPort, String metricsPath, Path rules)
      throws IOException {
    requireInstalled();
    Path data = dir.resolve("data");
    if (Files.exists(data)) {
      Trees.delete(data);
    }
    Files.createDirectories(data);
    // The scrape timeout must not exceed the interval; Prometheus's default (10 s) would.
    String config =
        """
        global:
          scrape_interval: 1s
          scrape_timeout: 1s
          evaluation_interval: 1s
        rule_files:
          - %s
        scrape_configs:
          - job_name: async-jobs
            metrics_path: %s
            static_configs:
              - targets: ["127.0.0.1:%d"]
        """
            .formatted(rules.toAbsolutePath(), metricsPath, targetPort);
    Path configFile = Files.writeString(dir.resolve("prometheus.yml"), config);
    Path log = dir.resolve("prometheus.log");
    int port = freePort();
    Process process =
        new ProcessBuilder(
                PROMETHEUS.toString(),
                "--config.file=" + configFile.toAbsolutePath(),
                "--storage.tsdb.path=" + data.toAbsolutePath(),
                "--web.listen-address=127.0.0.1:" + port)
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    return new PrometheusServer(process, log, port);
  }

  /** Runs {@code promtool} with {@code args}; returns its exit code and output. */
  public static Run promtool(String... args) throws IOException, InterruptedException {
    requireInstalled();
    List<String> command = new ArrayList<>();
    command.add(PROMTOOL.toString());
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      fail("promtool did not finish within 30 s: %s", out);
    }
    return new Run(p.exitValue(), out);
  }

  /** What a finished command returned and printed. */
  public record Run(int exitCode, String output) {}

  /** An instant query at the current time: the whole API answer, success or error. */
  public JsonNode query(String promql) {
    return get("/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8));
  }

  /**
   * A GET on the HTTP API, answered with its JSON body; a bad query is answered too (HTTP 400 with
   * {@code status: error}), so callers can report Prometheus's own message.
   */
  public JsonNode get(String pathAndQuery) {
    try {
      HttpResponse<String> response =
          HTTP.send(
              HttpRequest.newBuilder(base.resolve(pathAndQuery))
                  .timeout(Duration.ofSeconds(10))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      return JSON.readTree(response.body());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * Polls {@code condition} every 100 ms until it holds; fails naming {@code what}, with the end of
   * Prometheus's log, when it still does not after {@code timeout} or Prometheus has exited.
   */
  public void await(String what, Duration timeout, Callable<Boolean> condition) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    Exception last = null;
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        fail(
            "Prometheus exited with %d while waiting for %s:%n%s",
            process.exitValue(), what, tail());
      }
      try {
        if (Boolean.TRUE.equals(condition.call())) {
          return;
        }
      } catch (IOException | UncheckedIOException e) {
        // Not listening yet.
        last = e;
      }
      Thread.sleep(100);
    }
    fail("Waited %s for %s (last error: %s); Prometheus log:%n%s", timeout, what, last, tail());
  }

  /** The last lines Prometheus logged, for failure messages. */
  public String tail() {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  /** Stops Prometheus: SIGTERM, then SIGKILL if it has not exited within ten seconds. */
  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      process.waitFor(10, TimeUnit.SECONDS);
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }
}
