package io.asyncjobs.metrics;

import static io.asyncjobs.testing.Jobs.enqueueNoop;
import static io.asyncjobs.testing.Jobs.runAll;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.kinds.noop.NoopService;
import io.asyncjobs.queue.JobBulk;
import io.asyncjobs.queue.JobQueue;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@QuarkusTest
class JobMetricsTest {

  static final String ALICE = Tokens.user("alice");

  /** One Prometheus sample line: name, optional labels, value. */
  private static final Pattern SAMPLE =
      Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})?\\s+(\\S+)(?:\\s+\\d+)?$");

  private static final Pattern LABEL =
      Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

  private static final Pattern UUID_TEXT =
      Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");

  @Inject Database db;
  @Inject NoopService noop;
  @Inject JobQueue queue;
  @Inject JobBulk bulk;
  @Inject JobMetrics metrics;
  @Inject io.asyncjobs.lock.OwnerLocks locks;

  @BeforeEach
  void clean() throws InterruptedException {
    // A test class before this one may have left noop tasks in flight: they would hold slots.
    settle();
    db.clearJobs();
  }

  @AfterEach
  void settle() throws InterruptedException {
    db.update("UPDATE jobs SET cancel_requested = true WHERE status = 'running'");
    noop.runOnce();
    noop.awaitTasks(Duration.ofSeconds(10));
    noop.runOnce();
  }

  @Test
  void shouldCountEnqueuesOutcomesDurationsAndBytes() throws Exception {
    Scrape before = scrape();

    enqueueNoop(ALICE, "{\"sleep_ms\": 1}");
    enqueueNoop(ALICE, "{\"fail\": \"boom\"}");
    enqueueNoop(ALICE, "{\"fail\": true}");
    enqueueNoop(ALICE, "{\"artifact_bytes\": 1234}");
    Scrape enqueued = scrape();
    assertThat(enqueued.delta(before, "jobs_enqueued_total", "kind", "noop")).isEqualTo(4);

    runAll(noop);
    Scrape after = scrape();

    assertThat(after.delta(before, "jobs_completed_total", "kind", "noop", "status", "done"))
        .isEqualTo(2);
    assertThat(after.delta(before, "jobs_completed_total", "kind", "noop", "status", "failed"))
        .isEqualTo(2);
    assertThat(after.delta(before, "jobs_duration_seconds_count", "kind", "noop")).isEqualTo(4);
    assertThat(after.find("jobs_duration_seconds_bucket", "kind", "noop", "le", "0.01"))
        .isNotEmpty();
    assertThat(after.find("jobs_duration_seconds_bucket", "kind", "noop", "le", "3600.0"))
        .isNotEmpty();
    assertThat(after.delta(before, "jobs_pickup_delay_seconds_count", "kind", "noop")).isEqualTo(4);
    assertThat(after.find("jobs_pickup_delay_seconds_bucket", "kind", "noop")).isNotEmpty();
    assertThat(after.delta(before, "jobs_bytes_out_total", "kind", "noop")).isEqualTo(1234);
    assertThat(after.delta(before, "jobs_bytes_in_total", "kind", "noop")).isEqualTo(0);
    assertThat(after.delta(before, "jobs_items_total", "kind", "noop")).isEqualTo(2);
    assertThat(after.delta(before, "jobs_tick_duration_seconds_count", "kind", "noop"))
        .isGreaterThanOrEqualTo(2);
    assertThat(after.find("jobs_tick_duration_seconds_bucket", "kind", "noop", "le", "0.001"))
        .isNotEmpty();
  }

  @Test
  void shouldReadQueueDepthAndOldestPendingAgeFromTheDatabase() throws Exception {
    enqueueNoop(ALICE, "{}");
    enqueueNoop(ALICE, "{\"fail\": true}");
    runAll(noop);
    enqueueNoop(ALICE, "{}");
    // The waiting job was enqueued a minute and a half ago.
    db.update(
        "UPDATE jobs SET created_at = now() - interval '90 seconds'"
            + " WHERE kind = 'noop' AND status = 'pending'");

    metrics.refreshQueueGauges();
    Scrape scrape = scrape();

    for (String status : List.of("pending", "running", "done", "failed")) {
      long inDb =
          ((Number)
                  db.query(
                          "SELECT count(*) AS n FROM jobs WHERE kind = 'noop' AND status = ?",
                          status)
                      .get(0)
                      .get("n"))
              .longValue();
      assertThat(scrape.value("jobs_queue_depth", "kind", "noop", "status", status))
          .as(status)
          .isEqualTo(inDb);
    }
    assertThat(scrape.value("jobs_queue_depth", "kind", "noop", "status", "pending")).isEqualTo(1);
    assertThat(scrape.value("jobs_queue_depth", "kind", "noop", "status", "done")).isEqualTo(1);
    assertThat(scrape.value("jobs_oldest_pending_age_seconds", "kind", "noop"))
        .isBetween(85.0, 200.0);
    // A job delayed until tomorrow (or waiting out a retry's backoff), enqueued long ago, is not
    // waiting for a turn: the age is still the due job's. One whose time came five seconds ago
    // waits from then, not from its enqueue an hour back.
    String later = enqueueNoop(ALICE, "{}");
    db.update(
        "UPDATE jobs SET created_at = now() - interval '1 hour', run_after = now() + interval '1"
            + " day', delayed_until = now() + interval '1 day' WHERE uid = ?::uuid",
        later);
    metrics.refreshQueueGauges();
    assertThat(scrape().value("jobs_oldest_pending_age_seconds", "kind", "noop"))
        .as("the delayed job is not the oldest waiting one")
        .isBetween(85.0, 200.0);
    db.update(
        "UPDATE jobs SET run_after = now() - interval '5 seconds', delayed_until = NULL,"
            + " created_at = now() - interval '1 hour' WHERE uid = ?::uuid",
        later);
    db.update(
        "UPDATE jobs SET created_at = now() - interval '2 seconds' WHERE kind = 'noop'"
            + " AND status = 'pending' AND uid <> ?::uuid",
        later);
    metrics.refreshQueueGauges();
    assertThat(scrape().value("jobs_oldest_pending_age_seconds", "kind", "noop"))
        .as("due since its run_after")
        .isBetween(4.0, 60.0);
    db.update("DELETE FROM jobs WHERE uid = ?::uuid", later);
    db.update(
        "UPDATE jobs SET created_at = now() - interval '90 seconds'"
            + " WHERE kind = 'noop' AND status = 'pending'");
    metrics.refreshQueueGauges();
    scrape = scrape();
    // Every registered kind has every status, at zero when it has no rows.
    assertThat(scrape.find("jobs_queue_depth", "kind", "zip", "status", "running"))
        .singleElement()
        .extracting(Sample::value)
        .isEqualTo(0.0);

    // Per shard: the one shard of the unsharded mapping, and a shard of an earlier mapping (a
    // retired one) while it has jobs; it loses its gauges once it has none.
    assertThat(
            scrape.value(
                "jobs_shard_queue_depth", "kind", "noop", "shard", "all", "status", "pending"))
        .isEqualTo(1);
    db.update("UPDATE jobs SET shard = 'noop-1' WHERE kind = 'noop' AND status = 'pending'");
    metrics.refreshQueueGauges();
    Scrape retired = scrape();
    assertThat(
            retired.value(
                "jobs_shard_queue_depth", "kind", "noop", "shard", "noop-1", "status", "pending"))
        .isEqualTo(1);
    assertThat(
            retired.value(
                "jobs_shard_queue_depth", "kind", "noop", "shard", "all", "status", "pending"))
        .isZero();
    assertThat(retired.value("jobs_queue_depth", "kind", "noop", "status", "pending")).isEqualTo(1);

    runAll(noop); // the retired shard's job waits for a runner of its own: finish it by hand
    db.update("UPDATE jobs SET status = 'done', completed_at = now() WHERE shard = 'noop-1'");
    metrics.refreshQueueGauges();
    Scrape drained = scrape();
    assertThat(
            drained.find(
                "jobs_shard_queue_depth", "kind", "noop", "shard", "noop-1", "status", "pending"))
        .isEmpty();
    assertThat(
            drained.value(
                "jobs_shard_queue_depth", "kind", "noop", "shard", "all", "status", "pending"))
        .isZero();
    assertThat(drained.value("jobs_queue_depth", "kind", "noop", "status", "pending")).isZero();
    assertThat(drained.value("jobs_queue_depth", "kind", "noop", "status", "done")).isEqualTo(2);
    assertThat(drained.value("jobs_oldest_pending_age_seconds", "kind", "noop")).isZero();
  }

  @Test
  void shouldCountRetriesAndRecoveredOrphans() throws Exception {
    UUID failing = UUID.fromString(enqueueNoop(ALICE, "{\"fail\": true}"));
    runAll(noop);
    Scrape before = scrape();

    assertThat(bulk.retryJob(failing)).isTrue();
    Scrape retried = scrape();
    assertThat(retried.delta(before, "jobs_retried_total", "kind", "noop")).isEqualTo(1);
    assertThat(retried.delta(before, "jobs_enqueued_total", "kind", "noop")).isZero();

    // A running row left by an earlier owner (epoch 0) is an orphan for this owner, recovered
    // once the lock's earlier holders have certainly stopped: a few seconds after the app
    // started, which is now when this test runs first.
    long deadline = System.nanoTime() + java.time.Duration.ofSeconds(15).toNanos();
    while (!locks.primary().earlierHoldersSettled() && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    UUID orphan = UUID.fromString(enqueueNoop(ALICE, "{}"));
    db.update(
        "UPDATE jobs SET status = 'running', started_at = now(), epoch = 0 WHERE uid = ?", orphan);
    runAll(noop);
    Scrape after = scrape();
    assertThat(
            after.delta(
                before, "jobs_orphans_recovered_total", "kind", "noop", "outcome", "requeued"))
        .isEqualTo(1);
    assertThat(after.find("jobs_orphans_recovered_total", "kind", "noop", "outcome", "failed"))
        .isNotEmpty();
    assertThat(after.find("jobs_swept_total", "kind", "noop")).isNotEmpty();
    assertThat(after.find("jobs_cleanup_errors_total", "kind", "noop")).isNotEmpty();
    assertThat(after.find("jobs_timed_out_total", "kind", "noop")).isNotEmpty();
  }

  @Test
  void shouldShowAPausedKindAsOneUntilItIsResumed() {
    try {
      given()
          .auth()
          .oauth2(Tokens.admin("root"))
          .post("/api/admin/services/noop/pause")
          .then()
          .statusCode(200);
      metrics.refreshQueueGauges();
      Scrape paused = scrape();
      assertThat(paused.value("jobs_service_paused", "kind", "noop")).isEqualTo(1);
      assertThat(paused.value("jobs_service_paused", "kind", "zip")).isZero();
    } finally {
      given()
          .auth()
          .oauth2(Tokens.admin("root"))
          .post("/api/admin/services/noop/resume")
          .then()
          .statusCode(200);
    }
    metrics.refreshQueueGauges();
    assertThat(scrape().value("jobs_service_paused", "kind", "noop")).isZero();
  }

  @Test
  void shouldNeverLabelASeriesWithAJobOrAnOwner() throws Exception {
    String uid = enqueueNoop(ALICE, "{\"artifact_bytes\": 10}");
    runAll(noop);
    metrics.refreshQueueGauges();
    // A method the route lacks (405) matches no route template; its series must not carry the id.
    String other = UUID.randomUUID().toString();
    given().auth().oauth2(ALICE).post("/api/jobs/" + other + "/download").then().statusCode(405);

    String text = scrapeText();
    assertThat(text).doesNotContain(uid).doesNotContain(other).doesNotContain("alice");
    List<String> jobSeries = new ArrayList<>();
    for (String line : text.split("\n")) {
      Matcher sample = SAMPLE.matcher(line);
      if (line.startsWith("#") || !sample.matches()) {
        continue;
      }
      if (sample.group(1).startsWith("jobs_")) {
        jobSeries.add(line);
      }
      Map<String, String> labels = labels(sample.group(2));
      assertThat(labels.keySet())
          .as(line)
          .doesNotContain("uid", "owner", "owner_id", "owner_kind", "job", "identity");
      assertThat(labels.values()).as(line).noneMatch(v -> UUID_TEXT.matcher(v).find());
    }
    assertThat(jobSeries).isNotEmpty();
  }

  // ---- helpers ---------------------------------------------------------------------------

  static String scrapeText() {
    return given()
        .header("Accept", "text/plain; version=0.0.4")
        .get("/q/metrics")
        .then()
        .statusCode(200)
        .extract()
        .asString();
  }

  static Scrape scrape() {
    Scrape scrape = new Scrape();
    for (String line : scrapeText().split("\n")) {
      Matcher m = SAMPLE.matcher(line);
      if (!line.startsWith("#") && m.matches()) {
        scrape.samples.add(
            new Sample(m.group(1), labels(m.group(2)), Double.parseDouble(m.group(3))));
      }
    }
    return scrape;
  }

  static Map<String, String> labels(String text) {
    Map<String, String> labels = new LinkedHashMap<>();
    if (text != null) {
      Matcher m = LABEL.matcher(text);
      while (m.find()) {
        labels.put(m.group(1), m.group(2));
      }
    }
    return labels;
  }

  record Sample(String name, Map<String, String> labels, double value) {}

  /** The samples of one scrape, found by name and a subset of their labels. */
  static final class Scrape {
    final List<Sample> samples = new ArrayList<>();

    List<Sample> find(String name, String... labelPairs) {
      List<Sample> found = new ArrayList<>();
      for (Sample s : samples) {
        if (!s.name().equals(name)) {
          continue;
        }
        boolean all = true;
        for (int i = 0; i < labelPairs.length; i += 2) {
          all &= labelPairs[i + 1].equals(s.labels().get(labelPairs[i]));
        }
        if (all) {
          found.add(s);
        }
      }
      return found;
    }

    /** The value of exactly one series, which must be exported. */
    double value(String name, String... labelPairs) {
      List<Sample> found = find(name, labelPairs);
      assertThat(found).as(name + " " + List.of(labelPairs)).hasSize(1);
      return found.get(0).value();
    }

    /** How far a series moved since {@code earlier}, where it may not have existed yet. */
    double delta(Scrape earlier, String name, String... labelPairs) {
      double before =
          earlier.find(name, labelPairs).isEmpty() ? 0 : earlier.value(name, labelPairs);
      return value(name, labelPairs) - before;
    }
  }
}
