package io.asyncjobs.kinds.noop;

import io.asyncjobs.api.PayloadCheck;
import io.asyncjobs.engine.JobService;
import io.asyncjobs.engine.TransientFailure;
import io.asyncjobs.files.Artifacts;
import io.asyncjobs.files.FileScope;
import io.asyncjobs.queue.DatabaseErrors;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.NoopExecutions;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A diagnostic kind that does no real work: it returns at once, after {@code sleep_ms}, or fails
 * when the payload sets {@code fail}; its first {@code fail_attempts} attempts fail transiently (a
 * {@link TransientFailure}, tried again under {@code max-attempts}); {@code progress_steps} spreads
 * the sleep over that many progress reports; {@code artifact_bytes} leaves a file of that size to
 * download; with {@code record: true} it records each execution in {@code noop_executions} (start,
 * end, replica, and whether its effect landed), so tests can see a job's work take effect twice or
 * two executions overlap. Benchmarks drive the engine with it and operators can smoke-test a
 * deployment (enqueue, progress, download) with it. Off unless {@code
 * jobs.services.noop.enabled=true}.
 */
@ApplicationScoped
public class NoopService extends JobService implements PayloadCheck {

  /** Where executions are recorded; absent in a service made by hand. */
  @Inject NoopExecutions executions;

  /** Where the artifact goes; absent in a service made by hand. */
  @Inject Artifacts artifacts;

  /** Longest sleep a payload may ask for. */
  public static final long MAX_SLEEP_MS = 3_600_000;

  /** Most progress reports a payload may ask for. */
  public static final int MAX_PROGRESS_STEPS = 1_000;

  /** Largest artifact a payload may ask for. */
  public static final long MAX_ARTIFACT_BYTES = 1L << 30;

  /** The payload keys this kind understands; any other is refused at enqueue. */
  static final Set<String> KEYS =
      Set.of(
          "sleep_ms",
          "fail",
          "fail_attempts",
          "record",
          "progress_steps",
          "artifact_bytes",
          "name");

  /** Most attempts a payload may ask to fail transiently. */
  public static final int MAX_FAIL_ATTEMPTS = 100;

  /** This kind's name. */
  public static final String KIND = "noop";

  @Override
  public String kind() {
    return KIND;
  }

  @Override
  public String title() {
    return "No-op (diagnostics)";
  }

  @Override
  public boolean enabledByDefault() {
    return false;
  }

  @Override
  protected Map<String, Object> process(Job job) throws Exception {
    if (!Boolean.TRUE.equals(job.payload.get("record"))) {
      return work(job);
    }
    UUID execution = UUID.randomUUID();
    try {
      recordStart(job, execution);
    } catch (SQLException e) {
      // The start may have been written even though its answer was lost: end it, so that it does
      // not look like an execution still under way.
      try {
        recordEnd(execution, false);
      } catch (SQLException again) {
        e.addSuppressed(again);
      }
      throw e;
    }
    Map<String, Object> result;
    try {
      result = work(job);
    } catch (Exception | Error e) {
      recordEnd(execution, false);
      throw e;
    }
    if (!recordEnd(execution, true)) {
      throw new IllegalStateException(
          "the job is no longer running under an epoch of this replica's; its effect did not land");
    }
    return result;
  }

  private Map<String, Object> work(Job job) throws Exception {
    long sleepMs = sleepMs(job.payload);
    long steps = whole(job.payload, "progress_steps", MAX_PROGRESS_STEPS);
    if (steps > 0) {
      for (long step = 1; step <= steps; step++) {
        Thread.sleep(sleepMs / steps);
        reportProgress((double) step / steps, step);
      }
    } else if (sleepMs > 0) {
      Thread.sleep(sleepMs);
    }
    long failAttempts = whole(job.payload, "fail_attempts", MAX_FAIL_ATTEMPTS);
    if (job.attempt < failAttempts) {
      throw new TransientFailure(
          "attempt " + (job.attempt + 1) + " failed transiently because the payload asked to");
    }
    Object fail = job.payload.get("fail");
    if (fail != null && !Boolean.FALSE.equals(fail)) {
      throw new IllegalStateException(
          fail instanceof String message ? message : "failed because the payload asked to");
    }
    Map<String, Object> result = new HashMap<>();
    result.put("slept_ms", sleepMs);
    result.put("item_count", 1);
    long artifactBytes = whole(job.payload, "artifact_bytes", MAX_ARTIFACT_BYTES);
    if (job.payload.containsKey("artifact_bytes")) {
      result.put(RESULT_FILE, writeArtifact(job, artifactBytes));
      result.put("bytes_out", artifactBytes);
    }
    return result;
  }

  /**
   * Writes {@code size} bytes of a repeating text line under {@code artifacts/noop/<uid>/}, to a
   * temporary name first (removed if the attempt fails), and returns the file's path relative to
   * the data directory.
   */
  private String writeArtifact(Job job, long size) throws IOException {
    if (artifacts == null) {
      throw new IllegalStateException("this noop service has no data directory");
    }
    Path target = artifacts.folder(kind(), job.uid).resolve("noop.txt");
    Path partial = Artifacts.partial(target);
    byte[] line = ("noop job " + job.uid + "\n").getBytes(StandardCharsets.US_ASCII);
    try {
      try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(partial), 1 << 16)) {
        for (long left = size; left > 0; left -= line.length) {
          out.write(line, 0, (int) Math.min(line.length, left));
        }
      }
      return artifacts.relative(Artifacts.publish(partial, target));
    } finally {
      Files.deleteIfExists(partial); // gone once published; else this attempt's half file
    }
  }

  /** Records that the execution {@code execution} of {@code job} starts now. */
  private void recordStart(Job job, UUID execution) throws SQLException {
    if (executions == null) {
      throw new IllegalStateException("this noop service cannot record executions");
    }
    executions.start(execution, job.uid, currentEpoch(), Instant.now(), ownerLock().identity());
  }

  /**
   * Records the end of an execution and, when it worked, its effect, which lands only while this
   * replica still holds the job (see {@link #whileHeld}): like any effect, it must not land once
   * another owner holds the job. The end is what shows two executions overlapping, so a write that
   * fails because the database went away is tried again, for up to two minutes (an outage of the
   * database in a fault test), whatever interrupts the thread meanwhile.
   *
   * @return whether the effect landed (false when not asked for)
   */
  private boolean recordEnd(UUID execution, boolean effect) throws SQLException {
    Instant end = Instant.now();
    boolean interrupted = Thread.interrupted();
    long giveUpAt = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
    try {
      while (true) {
        try {
          return effect
              ? whileHeld(epochs -> executions.end(execution, end, true, epochs))
              : executions.end(execution, end, false, new long[0]);
        } catch (SQLException e) {
          // The engine may interrupt this thread meanwhile (it gave the job up); the pool then
          // refuses the wait for a connection, which is no reason to lose the record.
          boolean interruptedNow = Thread.interrupted();
          interrupted |= interruptedNow;
          boolean retryable =
              DatabaseErrors.isConnectionLost(e)
                  || interruptedNow
                  || String.valueOf(e.getMessage()).contains("nterrupted");
          if (System.nanoTime() > giveUpAt || !retryable) {
            throw e;
          }
          LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  protected void cleanup(Job job) throws IOException {
    if (artifacts != null) {
      artifacts.remove(kind(), job.uid);
    }
  }

  @Override
  public RouteDoc routeDoc() {
    return new RouteDoc(
        "Enqueue a no-op job",
        """
        A diagnostic job (off unless jobs.services.noop.enabled): sleeps, reports progress, \
        optionally fails or leaves a file to download. Answers 202 with Location at once.""",
        "with a file",
        "{\"sleep_ms\": 2000, \"progress_steps\": 4, \"artifact_bytes\": 1024,"
            + " \"name\": \"hello.txt\"}",
        """
        {"type": "object", "additionalProperties": false,
         "properties": {
           "sleep_ms": {"type": "integer", "minimum": 0, "maximum": %d},
           "progress_steps": {"type": "integer", "minimum": 0, "maximum": %d},
           "artifact_bytes": {"type": "integer", "minimum": 0, "maximum": %d},
           "fail": {"type": ["boolean", "string"],
                    "description": "true, or the message the job fails with"},
           "fail_attempts": {"type": "integer", "minimum": 0, "maximum": %d,
                             "description": "attempts that fail transiently first"},
           "record": {"type": "boolean", "description": "record each execution (tests)"},
           "name": {"type": "string", "minLength": 1, "maxLength": 255,
                    "description": "the download's file name"}}}"""
            .formatted(MAX_SLEEP_MS, MAX_PROGRESS_STEPS, MAX_ARTIFACT_BYTES, MAX_FAIL_ATTEMPTS),
        Map.of());
  }

  /** Only known keys, each of the right type and range; {@code name} names the download. */
  @Override
  public Accepted check(FileScope scope, Map<String, Object> body) {
    for (String key : body.keySet()) {
      if (!KEYS.contains(key)) {
        throw new IllegalArgumentException(
            "unknown field "
                + key
                + "; noop takes "
                + String.join(", ", KEYS.stream().sorted().toList()));
      }
    }
    sleepMs(body);
    whole(body, "progress_steps", MAX_PROGRESS_STEPS);
    whole(body, "artifact_bytes", MAX_ARTIFACT_BYTES);
    whole(body, "fail_attempts", MAX_FAIL_ATTEMPTS);
    Object fail = body.get("fail");
    if (fail != null && !(fail instanceof Boolean) && !(fail instanceof String)) {
      throw new IllegalArgumentException("fail must be true, false or a message");
    }
    Object record = body.get("record");
    if (record != null && !(record instanceof Boolean)) {
      throw new IllegalArgumentException("record must be true or false");
    }
    Object name = body.get("name");
    if (name != null && !(name instanceof String)) {
      throw new IllegalArgumentException("name must be a string");
    }
    return Accepted.plain(body, name instanceof String text ? text : null);
  }

  /** A whole number from 0 to {@code max} under {@code key}; 0 when absent. */
  private static long whole(Map<String, Object> payload, String key, long max) {
    Object value = payload.get(key);
    if (value == null) {
      return 0;
    }
    if (!(value instanceof Number n)
        || n.doubleValue() != n.longValue()
        || n.longValue() < 0
        || n.longValue() > max) {
      throw new IllegalArgumentException(key + " must be a whole number from 0 to " + max);
    }
    return n.longValue();
  }

  /** The requested sleep; rejects what is not a whole number from 0 to {@link #MAX_SLEEP_MS}. */
  public static long sleepMs(Map<String, Object> payload) {
    Object value = payload.get("sleep_ms");
    if (value == null) {
      return 0;
    }
    if (!(value instanceof Number n) || n.doubleValue() != n.longValue()) {
      throw new IllegalArgumentException("sleep_ms must be a whole number of milliseconds");
    }
    if (n.longValue() < 0 || n.longValue() > MAX_SLEEP_MS) {
      throw new IllegalArgumentException("sleep_ms must be between 0 and " + MAX_SLEEP_MS);
    }
    return n.longValue();
  }
}
