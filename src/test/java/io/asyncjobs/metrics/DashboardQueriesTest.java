package io.asyncjobs.metrics;

import static io.asyncjobs.testing.Jobs.as;
import static io.asyncjobs.testing.Jobs.enqueue;
import static io.asyncjobs.testing.Jobs.runUntilIdle;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.asyncjobs.files.Trees;
import io.asyncjobs.kinds.deepsearch.DeepsearchService;
import io.asyncjobs.kinds.noop.NoopService;
import io.asyncjobs.kinds.zip.ZipService;
import io.asyncjobs.settings.SettingsOverride;
import io.asyncjobs.settings.SettingsStore;
import io.asyncjobs.storage.DataDirectory;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.PrometheusServer;
import io.asyncjobs.testing.TestClock;
import io.asyncjobs.testing.Tokens;
import io.quarkus.arc.Arc;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.assertj.core.api.AbstractDoubleAssert;
import org.assertj.core.api.SoftAssertions;
import org.jboss.logging.Logger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Checks the Grafana dashboard and the alert rules in {@code k8s/base} against a real Prometheus
 * that scrapes this running service: after jobs of several kinds and outcomes ran, every panel
 * query must return at least one series with a number in it, every alert expression must be valid
 * and every rule must evaluate without error. See "How the dashboard and alerts are checked" in
 * {@code docs/metrics.md}.
 */
@QuarkusTest
class DashboardQueriesTest {

  private static final Logger LOG = Logger.getLogger(DashboardQueriesTest.class);

  static final Path DASHBOARD = Path.of("k8s/base/grafana-dashboard.yaml");
  static final Path RULES = Path.of("k8s/base/prometheus-rules.yaml");
  static final Path WORK = Path.of("target/prometheus");
  static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  static final ObjectMapper JSON = new ObjectMapper();

  /**
   * What stands in for Grafana's time variables ({@code $__rate_interval}, {@code $__interval},
   * {@code $__range}). Grafana makes {@code $__rate_interval} at least four scrape intervals and
   * {@code $__range} the whole time picker; the run lasts seconds, so a window that holds every
   * sample of it is what a dashboard zoomed on the run would use.
   */
  static final String WINDOW = "5m";

  /**
   * Bounds all the waiting on Prometheus together. Its first scrape comes about five seconds after
   * it starts (target discovery is only passed on every five seconds); the rest takes a few more.
   */
  static final Duration WAIT = Duration.ofSeconds(40);

  /** {@code $name}, {@code ${name}} or {@code ${name:format}}: a Grafana variable in a query. */
  static final Pattern VARIABLE = Pattern.compile("\\$(?:\\{(\\w+)(?::\\w+)?}|(\\w+))");

  static final String OWNER = "prom-" + UUID.randomUUID().toString().substring(0, 8);
  static final String TOKEN = Tokens.user(OWNER);

  /** Started by the first test that needs it; stopped after the last test. */
  static PrometheusServer prometheus;

  /** Whether the run is over and Prometheus has seen it; the run happens once per class. */
  static boolean scraped;

  /** Why the run failed, so that the tests after the first say so instead of failing anew. */
  static Throwable runFailed;

  @TestHTTPResource("/q/metrics")
  URL metricsUrl;

  @Inject NoopService noop;
  @Inject ZipService zip;
  @Inject DeepsearchService deepsearch;
  @Inject JobMetrics metrics;
  @Inject SettingsStore settings;
  @Inject TestClock clock;
  @Inject Database db;
  @Inject DataDirectory data;
  @Inject io.asyncjobs.callbacks.CallbackDelivery deliveries;

  @Test
  void shouldPassPromtoolCheckRules() throws Exception {
    PrometheusServer.Run check =
        PrometheusServer.promtool("check", "rules", rulesFile().toString());

    assertThat(check.exitCode()).as(check.output()).isZero();
    assertThat(check.output()).contains("SUCCESS: " + alerts().size() + " rules found");
  }

  @Test
  void shouldAnswerEveryPanelQueryWithSeries() throws Exception {
    scrapedAfterJobsRan();
    JsonNode dashboard = dashboard();
    Map<String, String> variables = variables(dashboard);
    List<String> problems = new ArrayList<>();
    int panels = 0;
    int queries = 0;
    for (JsonNode panel : panels(dashboard)) {
      panels++;
      String title = panel.path("title").asText();
      if (panel.path("targets").isEmpty()) {
        problems.add("panel \"" + title + "\" has no query");
      }
      for (JsonNode target : panel.path("targets")) {
        queries++;
        String expr = target.path("expr").asText();
        String promql = substitute(expr, variables);
        JsonNode answer = prometheus.query(promql);
        String where = "panel \"%s\" (%s): %s".formatted(title, target.path("refId"), promql);
        if (!"success".equals(answer.path("status").asText())) {
          problems.add(where + "\n    is invalid: " + answer.path("error").asText());
        } else if (answer.at("/data/result").isEmpty()) {
          problems.add(where + "\n    returns no series");
        } else if (!hasNumber(answer)) {
          problems.add(where + "\n    returns no finite value, so the panel stays blank");
        }
      }
    }
    assertThat(problems).as("%d panels, %d queries", panels, queries).isEmpty();
    assertThat(panels).isPositive();

    // The kind variable lists every kind that ran, so its "All" covers them.
    JsonNode kinds = kindValues(dashboard);
    assertThat(kinds.path("status").asText()).as(kinds.toString()).isEqualTo("success");
    assertThat(kinds.path("data"))
        .extracting(JsonNode::asText)
        .contains(NoopService.KIND, "zip", "deepsearch");

    // Values a user would read off the panels after this run, all reported at once.
    SoftAssertions softly = new SoftAssertions();
    String ratio = "Failure ratio";
    shown(softly, dashboard, ratio, "A", "kind=noop").isStrictlyBetween(0.0, 1.0);
    shown(softly, dashboard, ratio, "A", "kind=zip").isZero();
    String finished = "Jobs finished per second, by kind and status";
    shown(softly, dashboard, finished, "A", "kind=noop,status=done").isPositive();
    shown(softly, dashboard, finished, "A", "kind=noop,status=failed").isPositive();
    shown(softly, dashboard, finished, "A", "kind=zip,status=done").isPositive();
    shown(softly, dashboard, finished, "A", "kind=deepsearch,status=done").isPositive();
    String bytes = "Bytes read and written per second";
    shown(softly, dashboard, bytes, "A", "kind=zip").isPositive();
    shown(softly, dashboard, bytes, "A", "kind=deepsearch").isPositive();
    shown(softly, dashboard, bytes, "B", "kind=zip").isPositive();
    shown(softly, dashboard, "Items per second", "A", "kind=zip").isPositive();
    String depth = "Queue depth (pending and running)";
    shown(softly, dashboard, depth, "A", "kind=noop,status=pending").isEqualTo(1.0);
    shown(softly, dashboard, "Oldest pending job", "A", "kind=noop").isGreaterThan(900);
    String byShard = "Queue depth by shard";
    shown(softly, dashboard, byShard, "A", "kind=noop,shard=all,status=pending").isEqualTo(1.0);
    String recovery = "Recovery and retention";
    shown(softly, dashboard, recovery, "A", "kind=noop,outcome=requeued").isPositive();
    shown(softly, dashboard, recovery, "D", "kind=noop").isPositive();
    shown(softly, dashboard, "Owner", "A", "shard=all").isEqualTo(1.0);
    shown(softly, dashboard, "Paused kinds", "A", "kind=deepsearch").isEqualTo(1.0);
    shown(softly, dashboard, "Paused kinds", "A", "kind=noop").isZero();
    shown(softly, dashboard, "HTTP requests by status", "A", "status=202").isPositive();
    String retries = "Retries and callbacks";
    shown(softly, dashboard, retries, "A", "kind=noop").isPositive();
    shown(softly, dashboard, retries, "A", "kind=zip").isZero();
    shown(softly, dashboard, retries, "B", "kind=noop,outcome=failed").isPositive();
    shown(softly, dashboard, retries, "B", "kind=zip,outcome=gave-up").isZero();
    shown(softly, dashboard, "Longest wait per owner", "A", "kind=noop,owner=user:" + OWNER)
        .isGreaterThan(900);
    softly.assertAll();
  }

  @Test
  void shouldEvaluateEveryAlertRule() throws Exception {
    scrapedAfterJobsRan();
    Map<String, String> alerts = alerts();
    List<String> problems = new ArrayList<>();
    for (Map.Entry<String, String> alert : alerts.entrySet()) {
      JsonNode answer = prometheus.query(alert.getValue());
      if (!"success".equals(answer.path("status").asText())) {
        problems.add(
            alert.getKey() + ": " + alert.getValue() + "\n    is invalid: " + answer.path("error"));
      }
    }
    assertThat(problems).isEmpty();

    Map<String, JsonNode> evaluated = new TreeMap<>();
    for (JsonNode group : prometheus.get("/api/v1/rules").at("/data/groups")) {
      for (JsonNode rule : group.path("rules")) {
        evaluated.put(rule.path("name").asText(), rule);
      }
    }
    assertThat(evaluated).containsOnlyKeys(alerts.keySet());
    evaluated.forEach(
        (name, rule) -> {
          assertThat(rule.path("health").asText()).as(name + ": " + rule).isEqualTo("ok");
          assertThat(rule.path("lastEvaluation").asText()).as(name).doesNotStartWith("0001");
        });

    // This instance owns the queue, so neither owner alert holds.
    assertThat(series(alerts.get("AsyncJobsNoOwner"))).isEmpty();
    assertThat(series(alerts.get("AsyncJobsSeveralOwners"))).isEmpty();
    assertThat(evaluated.get("AsyncJobsNoOwner").path("state").asText()).isEqualTo("inactive");
    // More than 20% of noop jobs failed, none of the others; they wait out their "for" as pending.
    assertThat(series(alerts.get("AsyncJobsFailureRatio"))).containsOnlyKeys("kind=noop");
    assertThat(evaluated.get("AsyncJobsFailureRatio").path("state").asText()).isEqualTo("pending");
    // The noop job backdated by 20 minutes is past the 15-minute threshold.
    assertThat(series(alerts.get("AsyncJobsOldestPending"))).containsOnlyKeys("kind=noop");
    assertThat(evaluated.get("AsyncJobsOldestPending").path("state").asText()).isEqualTo("pending");
  }

  @AfterAll
  static void stopPrometheus() throws Exception {
    if (prometheus != null) {
      prometheus.close();
      prometheus = null;
      Database db = Arc.container().instance(Database.class).get();
      // No noop task of this class may still run when the next class starts.
      NoopService noop = Arc.container().instance(NoopService.class).get();
      db.update("UPDATE jobs SET cancel_requested = true WHERE status = 'running'");
      noop.runOnce();
      noop.awaitTasks(Duration.ofSeconds(10));
      noop.runOnce();
      db.clearJobs();
      Trees.delete(
          Arc.container()
              .instance(DataDirectory.class)
              .get()
              .root()
              .resolve("files/user/" + OWNER));
    }
  }

  // ---- the run ---------------------------------------------------------------------------

  /**
   * Runs jobs, some before Prometheus's first scrape (so counters are above zero when first seen)
   * and the rest after it (so rate() and increase() see them move), then waits until a scrape has
   * seen them all and every rule was evaluated on that scrape. Once per class.
   */
  /**
   * A noop job that fails transiently once under max-attempts 2 (put back, then done), and one
   * whose callback goes to a port nothing listens on (a failed delivery).
   */
  private void retriedAndCalledBack() throws Exception {
    settings.update(
        NoopService.KIND, new SettingsOverride(null, null, null, null, null, null, null, 2));
    try {
      String retried = enqueue(TOKEN, "noop", "{\"fail_attempts\": 1}");
      noop.runOnce();
      assertThat(noop.awaitTasks(Duration.ofSeconds(10))).isTrue();
      noop.runOnce();
      assertThat(db.update("UPDATE jobs SET delayed_until = now() WHERE uid = ?::uuid", retried))
          .as("put back after its transient failure")
          .isEqualTo(1);
      as(TOKEN)
          .contentType(ContentType.JSON)
          .queryParam("callback_url", "http://127.0.0.1:1/hook")
          .body("{}")
          .post("/api/noop")
          .then()
          .statusCode(202);
      runUntilIdle(noop, db);
      noop.runOnce(); // delivers the callback of the job that ended last
      assertThat(deliveries.awaitIdle(Duration.ofSeconds(20))).isTrue();
    } finally {
      settings.update(NoopService.KIND, SettingsOverride.NONE);
    }
  }

  private void scrapedAfterJobsRan() throws Exception {
    if (runFailed != null) {
      fail("the run before the first query failed", runFailed);
    }
    if (scraped) {
      return;
    }
    try {
      runAndScrape();
      scraped = true;
    } catch (Exception | AssertionError e) {
      runFailed = e;
      throw e;
    }
  }

  private void runAndScrape() throws Exception {
    PrometheusServer.requireInstalled();
    long begin = System.nanoTime();
    long deadline = begin + WAIT.toNanos();
    clock.reset();
    db.clearJobs();
    writeTree();

    enqueue(TOKEN, "noop", "{\"artifact_bytes\": 2048}");
    enqueue(TOKEN, "noop", "{\"fail\": \"before the first scrape\"}");
    runUntilIdle(noop, db);
    metrics.refreshQueueGauges();

    Files.createDirectories(WORK);
    prometheus =
        PrometheusServer.start(WORK, metricsUrl.getPort(), metricsUrl.getPath(), rulesFile());
    prometheus.await(
        "the first scrape of the service",
        left(deadline),
        () -> "up".equals(target().path("health").asText()));
    long firstScrape = System.nanoTime();

    // Zip and deepsearch run only from here on: their rates can only be positive if their counters
    // were already exported, at 0, before this first scrape.

    enqueue(TOKEN, "noop", "{\"sleep_ms\": 5}");
    enqueue(TOKEN, "noop", "{\"fail\": \"after the first scrape\"}");
    enqueue(TOKEN, "zip", "{\"paths\": [\"docs\", \"pics\"]}");
    enqueue(TOKEN, "deepsearch", "{\"root\": \"docs\", \"query\": \"falcon\"}");
    // A running row left by an earlier owner (epoch 0): recovered, then run.
    String orphan = enqueue(TOKEN, "noop", "{}");
    db.update(
        "UPDATE jobs SET status = 'running', started_at = now(), epoch = 0 WHERE uid = ?::uuid",
        orphan);
    runUntilIdle(noop, db);
    runUntilIdle(zip, db);
    runUntilIdle(deepsearch, db);
    retriedAndCalledBack();
    cancelPendingAndRunning();
    timeOut();
    // Waiting for 20 minutes: past the oldest-pending alert's 15.
    enqueue(TOKEN, "noop", "{}");
    db.update(
        "UPDATE jobs SET created_at = now() - interval '20 minutes'"
            + " WHERE kind = 'noop' AND status = 'pending'");
    // Deepsearch paused for the gauges' refresh; the gauge keeps 1 until the next refresh, and the
    // row goes at once so no other test finds the kind paused.
    db.update(
        "INSERT INTO service_pauses (service, paused_at, paused_by) VALUES ('deepsearch', now(),"
            + " 'user:root')");
    try {
      metrics.refreshQueueGauges();
    } finally {
      db.update("DELETE FROM service_pauses");
    }
    Instant ran = Instant.now();

    // A failed scrape would mark every series stale, so only a successful one counts.
    prometheus.await(
        "a successful scrape after the jobs ran",
        left(deadline),
        () ->
            time(target().path("lastScrape")).isAfter(ran)
                && "up".equals(target().path("health").asText()));
    JsonNode target = target();
    Instant seen =
        time(target.path("lastScrape"))
            .plusMillis((long) (target.path("lastScrapeDuration").asDouble() * 1000) + 1);
    prometheus.await(
        "every rule evaluated after that scrape",
        left(deadline),
        () -> {
          for (JsonNode group : prometheus.get("/api/v1/rules").at("/data/groups")) {
            for (JsonNode rule : group.path("rules")) {
              if (!time(rule.path("lastEvaluation")).isAfter(seen)) {
                return false;
              }
            }
          }
          return true;
        });
    LOG.infof(
        "Prometheus scraped the service %s times, %s samples in all (%s per scrape);"
            + " jobs and scrapes took %d ms, %d ms of it after the first scrape",
        value("count_over_time(up[" + WINDOW + "])"),
        value("sum_over_time(scrape_samples_scraped[" + WINDOW + "])"),
        value("scrape_samples_scraped"),
        (System.nanoTime() - begin) / 1_000_000,
        (System.nanoTime() - firstScrape) / 1_000_000);
  }

  private void writeTree() throws Exception {
    Path home = data.root().resolve("files/user/" + OWNER);
    Trees.delete(home);
    Files.createDirectories(home.resolve("docs/notes"));
    Files.createDirectories(home.resolve("pics"));
    Files.writeString(
        home.resolve("docs/falcons.md"),
        "# Falcons\n\nThe peregrine falcon is the fastest falcon.\n".repeat(50));
    Files.writeString(home.resolve("docs/notes/birds.txt"), "A falcon passed over the garden.\n");
    Files.write(home.resolve("pics/p.jpg"), new byte[20_000]);
  }

  /** One job that is cancelled while pending (never counted as an outcome), one while running. */
  private void cancelPendingAndRunning() throws Exception {
    String running = enqueue(TOKEN, "noop", "{\"sleep_ms\": 60000}");
    noop.runOnce();
    String pending = enqueue(TOKEN, "noop", "{}");
    given().auth().oauth2(TOKEN).delete("/api/jobs/" + pending).then().statusCode(200);
    given().auth().oauth2(TOKEN).delete("/api/jobs/" + running).then().statusCode(202);
    runUntilIdle(noop, db);
  }

  /** One noop job that runs past a one-second timeout, on the test clock. */
  private void timeOut() throws Exception {
    settings.update(NoopService.KIND, new SettingsOverride(null, null, 1L, null));
    try {
      String uid = enqueue(TOKEN, "noop", "{\"sleep_ms\": 60000, \"record\": true}");
      noop.runOnce();
      // Its time counts from when a worker thread takes it: the clock moves only after that, or
      // a thread slow to start would begin it at the moved time and it would not be late yet.
      long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (db.query("SELECT 1 FROM noop_executions WHERE uid = ?::uuid", uid).isEmpty()) {
        assertThat(System.nanoTime()).as("the job started within 10 s").isLessThan(until);
        Thread.sleep(5);
      }
      clock.advance(Duration.ofSeconds(2));
      assertThat(noop.runOnce().timedOut()).isEqualTo(1);
      assertThat(noop.awaitTasks(Duration.ofSeconds(10))).isTrue();
    } finally {
      clock.reset();
      db.update("DELETE FROM service_settings WHERE service = ?", NoopService.KIND);
    }
  }

  // ---- the dashboard and the rules -------------------------------------------------------

  /** The dashboard JSON held by the ConfigMap (its only {@code *.json} entry). */
  static JsonNode dashboard() throws Exception {
    JsonNode configMap = YAML.readTree(DASHBOARD.toFile());
    List<String> entries = new ArrayList<>();
    configMap.path("data").properties().forEach(entry -> entries.add(entry.getKey()));
    assertThat(entries)
        .as("data entries of " + DASHBOARD)
        .singleElement()
        .asString()
        .endsWith(".json");
    return JSON.readTree(configMap.path("data").path(entries.get(0)).asText());
  }

  /** Every panel, including those nested in rows. */
  static List<JsonNode> panels(JsonNode dashboard) {
    List<JsonNode> all = new ArrayList<>();
    collectPanels(dashboard.path("panels"), all);
    return all;
  }

  private static void collectPanels(JsonNode panels, List<JsonNode> into) {
    for (JsonNode panel : panels) {
      if (panel.has("targets")) {
        into.add(panel);
      }
      collectPanels(panel.path("panels"), into);
    }
  }

  /**
   * The value of each dashboard variable as the "All" choice sets it (its {@code allValue}), and
   * the time variables as {@link #WINDOW}.
   */
  static Map<String, String> variables(JsonNode dashboard) {
    Map<String, String> values = new LinkedHashMap<>();
    values.put("__rate_interval", WINDOW);
    values.put("__interval", WINDOW);
    values.put("__range", WINDOW);
    for (JsonNode variable : dashboard.at("/templating/list")) {
      if (variable.path("includeAll").asBoolean() && variable.has("allValue")) {
        values.put(variable.path("name").asText(), variable.path("allValue").asText());
      }
    }
    return values;
  }

  /** The query with every variable replaced; a variable this test does not know fails it. */
  static String substitute(String expr, Map<String, String> variables) {
    Matcher m = VARIABLE.matcher(expr);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      String name = m.group(1) != null ? m.group(1) : m.group(2);
      String value = variables.get(name);
      if (value == null) {
        fail("unknown Grafana variable $%s in %s; give it a value in this test", name, expr);
      }
      m.appendReplacement(out, Matcher.quoteReplacement(value));
    }
    return m.appendTail(out).toString();
  }

  /** The values of the {@code kind} variable, asked the way Grafana asks for label_values(). */
  private static JsonNode kindValues(JsonNode dashboard) {
    for (JsonNode variable : dashboard.at("/templating/list")) {
      if ("kind".equals(variable.path("name").asText())) {
        Matcher m =
            Pattern.compile("label_values\\((\\w+),\\s*(\\w+)\\)")
                .matcher(variable.path("definition").asText());
        assertThat(m.matches()).as(variable.toString()).isTrue();
        return prometheus.get("/api/v1/label/" + m.group(2) + "/values?match%5B%5D=" + m.group(1));
      }
    }
    return fail("the dashboard has no kind variable");
  }

  /**
   * A soft assertion on the value one panel query shows for the series with exactly {@code labels}
   * ({@code kind=noop,status=done}, sorted); NaN when it shows no such series.
   */
  private static AbstractDoubleAssert<?> shown(
      SoftAssertions softly, JsonNode dashboard, String title, String refId, String labels) {
    for (JsonNode panel : panels(dashboard)) {
      if (title.equals(panel.path("title").asText())) {
        for (JsonNode target : panel.path("targets")) {
          if (refId.equals(target.path("refId").asText())) {
            String promql = substitute(target.path("expr").asText(), variables(dashboard));
            return softly
                .assertThat(series(promql).getOrDefault(labels, Double.NaN))
                .as("panel \"%s\" (%s) {%s}: %s", title, refId, labels, promql);
          }
        }
      }
    }
    return fail("no panel \"%s\" with a query %s", title, refId);
  }

  /** The series an instant query returns, keyed by their labels, sorted. */
  private static Map<String, Double> series(String promql) {
    JsonNode answer = prometheus.query(promql);
    assertThat(answer.path("status").asText()).as(promql + ": " + answer).isEqualTo("success");
    Map<String, Double> out = new TreeMap<>();
    for (JsonNode s : answer.at("/data/result")) {
      List<String> labels = new ArrayList<>();
      s.path("metric")
          .properties()
          .forEach(label -> labels.add(label.getKey() + "=" + label.getValue().asText()));
      labels.sort(null);
      out.put(String.join(",", labels), number(s.at("/value/1")));
    }
    return out;
  }

  private static double value(String promql) {
    return series(promql).values().stream().mapToDouble(Double::doubleValue).sum();
  }

  /** Whether any series has a finite value: NaN and infinities leave a panel blank. */
  private static boolean hasNumber(JsonNode answer) {
    for (JsonNode s : answer.at("/data/result")) {
      if (Double.isFinite(number(s.at("/value/1")))) {
        return true;
      }
    }
    return false;
  }

  /** A sample value as the API writes it: a decimal, {@code NaN}, {@code +Inf} or {@code -Inf}. */
  private static double number(JsonNode value) {
    return switch (value.asText()) {
      case "+Inf" -> Double.POSITIVE_INFINITY;
      case "-Inf" -> Double.NEGATIVE_INFINITY;
      default -> Double.parseDouble(value.asText());
    };
  }

  /** Each alert's name and expression, in file order. */
  static Map<String, String> alerts() throws Exception {
    Map<String, String> alerts = new LinkedHashMap<>();
    for (JsonNode group : YAML.readTree(RULES.toFile()).at("/spec/groups")) {
      for (JsonNode rule : group.path("rules")) {
        alerts.put(rule.path("alert").asText(), rule.path("expr").asText());
      }
    }
    return alerts;
  }

  /**
   * The PrometheusRule's {@code spec.groups} as a plain Prometheus rules file, which is what the
   * operator hands Prometheus and what promtool reads.
   */
  static Path rulesFile() throws Exception {
    ObjectNode rules = YAML.createObjectNode();
    rules.set("groups", YAML.readTree(RULES.toFile()).at("/spec/groups"));
    Path file = Files.createDirectories(WORK).resolve("rules.yml");
    YAML.writeValue(file.toFile(), rules);
    return file;
  }

  private static Duration left(long deadline) {
    return Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
  }

  /** A time as Prometheus's API writes it (RFC 3339, in its local offset). */
  private static Instant time(JsonNode text) {
    return OffsetDateTime.parse(text.asText()).toInstant();
  }

  /** The one scrape target, as Prometheus reports it. */
  private static JsonNode target() {
    JsonNode targets = prometheus.get("/api/v1/targets").at("/data/activeTargets");
    return targets.isEmpty() ? JSON.createObjectNode() : targets.get(0);
  }
}
