package io.asyncjobs.testing;

import io.asyncjobs.auth.DevKeysConfigSourceFactory;
import io.asyncjobs.devdb.EmbeddedPostgresLauncher;
import java.io.IOException;
import java.io.Reader;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * One replica of the packaged application (or of the native executable, in a {@code -Dnative}
 * build), started as its own process on a loopback port.
 */
public final class ServiceProcess implements AutoCloseable {

  private static final Path ARTIFACT = Path.of("target", "quarkus-artifact.properties");
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

  /** The replica's name, also its lock identity. */
  public final String name;

  /** Its HTTP port on 127.0.0.1. */
  public final int port;

  /** Where its output goes. */
  public final Path log;

  private final Process process;

  private ServiceProcess(String name, int port, Path log, Process process) {
    this.name = name;
    this.port = port;
    this.log = log;
    this.process = process;
  }

  /** Starts a replica named {@code name}; its output goes to target/failover/NAME.log. */
  public static ServiceProcess start(String name, Map<String, String> env) throws IOException {
    return start(name, env, command());
  }

  /**
   * Starts a replica named {@code name} with {@code command} (for instance {@link #jarCommand} of
   * another build of the application); its output goes to target/failover/NAME.log.
   */
  public static ServiceProcess start(String name, Map<String, String> env, List<String> command)
      throws IOException {
    int port = freePort();
    Path log = Files.createDirectories(Path.of("target", "failover")).resolve(name + ".log");
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
    builder.environment().putAll(env);
    builder.environment().put("QUARKUS_HTTP_HOST", "127.0.0.1");
    builder.environment().put("QUARKUS_HTTP_PORT", Integer.toString(port));
    builder.environment().put("JOBS_LOCK_IDENTITY", name);
    return new ServiceProcess(name, port, log, builder.start());
  }

  /**
   * The environment that points a replica at {@code jdbcUrl} (an embedded PostgreSQL) and a data
   * dir, and names the token issuer production must name (the test profile's, which {@link Tokens}
   * signs as), so the replica starts.
   */
  public static Map<String, String> environment(String jdbcUrl, Path dataDir) {
    Map<String, String> env = new HashMap<>();
    env.put("QUARKUS_DATASOURCE_JDBC_URL", jdbcUrl);
    env.put("QUARKUS_DATASOURCE_USERNAME", EmbeddedPostgresLauncher.USER);
    env.put("QUARKUS_DATASOURCE_PASSWORD", "");
    env.put("JOBS_DATA_DIR", dataDir.toString());
    env.put("MP_JWT_VERIFY_ISSUER", DevKeysConfigSourceFactory.DEV_ISSUER);
    return env;
  }

  /** Waits until the replica answers its readiness check. */
  public void awaitReady(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException(name + " exited with " + process.exitValue());
      }
      if (ready() != null) {
        return;
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException(name + " was not ready within " + timeout);
  }

  /** Whether the replica reports that it owns the lock; false when it does not answer. */
  public boolean isOwner() {
    String body = ready();
    return body != null && body.replace(" ", "").contains("\"owner\":true");
  }

  /**
   * The shards the replica reports owning (its readiness check's {@code owned}, with shards), or
   * null when it does not answer.
   */
  public java.util.Set<String> ownedShards() {
    String body = ready();
    if (body == null) {
      return null;
    }
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("\"owned\"\\s*:\\s*\"([^\"]*)\"").matcher(body);
    if (!m.find()) {
      return java.util.Set.of();
    }
    return m.group(1).isEmpty() ? java.util.Set.of() : java.util.Set.of(m.group(1).split(","));
  }

  /** kill -9. */
  public void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor();
  }

  /** SIGTERM, as Kubernetes stops a pod. */
  public void terminate() {
    process.destroy();
  }

  /** Waits for the process to end after {@link #terminate()}. */
  public boolean awaitExit(Duration timeout) throws InterruptedException {
    return process.waitFor(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
  }

  /** The exit code; only after the process ended. */
  public int exitValue() {
    return process.exitValue();
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      process.destroyForcibly();
      process.waitFor();
    }
  }

  /**
   * The readiness check's HTTP status (200 up, 503 down), or 0 when the replica does not answer.
   */
  public int readinessStatus() {
    try {
      return HTTP.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/q/health/ready"))
                  .timeout(Duration.ofSeconds(2))
                  .build(),
              HttpResponse.BodyHandlers.discarding())
          .statusCode();
    } catch (IOException e) {
      return 0;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 0;
    }
  }

  /** The readiness check's body when it answers 200, else null. */
  public String readinessBody() {
    return ready();
  }

  /** Whether the process still runs. */
  public boolean isAlive() {
    return process.isAlive();
  }

  private String ready() {
    try {
      HttpResponse<String> response =
          HTTP.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/q/health/ready"))
                  .timeout(Duration.ofSeconds(2))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      return response.statusCode() == 200 ? response.body() : null;
    } catch (IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  /**
   * How to run what the package phase built, as Quarkus records it in quarkus-artifact.properties:
   * the fast-jar on this JVM, or the native executable of a {@code -Dnative} build.
   */
  /** The command that runs the packaged application: the jar, or the native executable. */
  public static List<String> command() throws IOException {
    Properties artifact = new Properties();
    try (Reader in = Files.newBufferedReader(ARTIFACT)) {
      artifact.load(in);
    } catch (NoSuchFileException e) {
      throw new IllegalStateException(ARTIFACT + " is missing: run the package phase first", e);
    }
    Path path = ARTIFACT.resolveSibling(artifact.getProperty("path"));
    return switch (artifact.getProperty("type")) {
      case "jar" -> jarCommand(path);
      case "native" -> List.of(path.toString(), "-Xmx256m");
      default ->
          throw new IllegalStateException(
              ARTIFACT + " names a " + artifact.getProperty("type") + ", which cannot run");
    };
  }

  /** The command that runs the fast-jar {@code quarkusRunJar} (quarkus-run.jar) on this JVM. */
  public static List<String> jarCommand(Path quarkusRunJar) {
    return List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx256m",
        "-jar",
        quarkusRunJar.toString());
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }
}
