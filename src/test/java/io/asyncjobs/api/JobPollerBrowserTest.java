package io.asyncjobs.api;

import static io.asyncjobs.testing.Jobs.runAll;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.asyncjobs.kinds.noop.NoopService;
import io.asyncjobs.testing.Browser;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.TestClock;
import io.asyncjobs.testing.Tokens;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.io.IOException;
import java.net.URL;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.chrome.ChromeDriver;

/**
 * Drives {@code /js/JobPoller.js} in Debian's headless Chromium against the running app: a test
 * page ({@code src/test/resources/META-INF/resources/poller-test.html}) starts pollers whose
 * callbacks land in {@code window.events}, while this test moves the jobs through the engine.
 */
@QuarkusTest
class JobPollerBrowserTest {

  static final String ALICE = Tokens.user("alice");
  static final String BOB = Tokens.user("bob");
  static final ObjectMapper JSON = new ObjectMapper();
  static final Duration WAIT = Duration.ofSeconds(15);

  static Browser browser;
  static ChromeDriver driver;

  @TestHTTPResource("/poller-test.html")
  URL page;

  @Inject Database db;
  @Inject NoopService noop;
  @Inject TestClock clock;
  @Inject io.asyncjobs.settings.SettingsStore settings;

  @BeforeAll
  static void startBrowser() throws IOException {
    browser = Browser.start();
    driver = browser.driver();
  }

  @AfterAll
  static void stopBrowser() throws IOException {
    if (browser != null) {
      browser.screenshot(Path.of("target/poller-test.png"));
      browser.close();
      browser = null;
      driver = null;
    }
  }

  @BeforeEach
  void openPage() {
    clock.reset();
    db.clearJobs();
    driver.get(page.toString());
    assertThat(js("return typeof JobPoller.run + ' ' + typeof startPoller"))
        .as("the test page loaded /js/JobPoller.js")
        .isEqualTo("function function");
  }

  @AfterEach
  void settle() throws InterruptedException {
    js("window.handles.forEach(function (h) { h.cancel(); })");
    // Interrupt whatever a test left running, so the next one starts from an idle engine.
    db.update("UPDATE jobs SET cancel_requested = true WHERE status = 'running'");
    noop.runOnce();
    noop.awaitTasks(Duration.ofSeconds(10));
    noop.runOnce();
  }

  @Test
  void shouldReportDoneOnceWithADownloadLinkThatWorksWithoutAToken() throws Exception {
    String statusUrl = enqueue(ALICE, "{\"artifact_bytes\": 2048, \"name\": \"hello.txt\"}");
    int poller = start(statusUrl, ALICE, Map.of());
    Map<String, Object> first = awaitEvent(poller, "update");
    assertThat(job(first).get("status")).isEqualTo("pending");

    runAll(noop);

    Map<String, Object> done = job(awaitEvent(poller, "done"));
    assertThat(done.get("status")).isEqualTo("done");
    assertThat((String) done.get("download_url"))
        .startsWith(statusUrl + "/download?expires=")
        .contains("sig=");
    assertThat(awaitEvent(poller, "settled").get("outcome")).isEqualTo("done");
    assertThat(types(poller)).containsOnlyOnce("done").doesNotContain("failed", "timeout");

    Object download =
        driver.executeAsyncScript(
            "var done = arguments[arguments.length - 1];"
                + "fetch(arguments[0]).then(function (r) {"
                + "  return r.text().then(function (t) { done(r.status + ' ' + t.length); });"
                + "}).catch(function (e) { done(String(e)); });",
            done.get("download_url"));
    assertThat(download).as("status and length of the download").isEqualTo("200 2048");
  }

  @Test
  void shouldEnqueueWithTheBrowsersOptionsAndReportATransientFailuresRetry() throws Exception {
    settings.update(
        NoopService.KIND,
        new io.asyncjobs.settings.SettingsOverride(null, null, null, null, null, null, null, 2));
    try {
      @SuppressWarnings("unchecked")
      Map<String, Object> answer =
          (Map<String, Object>)
              driver.executeAsyncScript(
                  "var done = arguments[arguments.length - 1];"
                      + "JobPoller.enqueue('/api/noop', {fail_attempts: 1}, {token: arguments[0],"
                      + "  priority: -3, runAfter: new Date(Date.now() - 1000),"
                      + "  callbackUrl: 'http://builds.ci.svc.cluster.local/hooks/a?b=1&c=2',"
                      + "  idempotencyKey: 'browser-1'})"
                      + ".then(function (job) { done(job); })"
                      + ".catch(function (e) { done({error: String(e)}); });",
                  ALICE);
      assertThat(answer).containsKey("status_url").doesNotContainKey("error");
      String statusUrl = (String) answer.get("status_url");
      Map<String, Object> row =
          db.query(
                  "SELECT priority, run_after, callback_url, idempotency_key FROM jobs"
                      + " WHERE uid = ?::uuid",
                  uid(statusUrl))
              .get(0);
      assertThat(((Number) row.get("priority")).intValue()).isEqualTo(-3);
      assertThat(row.get("run_after")).as("a Date a second ago: due at once, kept").isNotNull();
      assertThat(row.get("callback_url"))
          .as("encoded in the query, decoded by the API")
          .isEqualTo("http://builds.ci.svc.cluster.local/hooks/a?b=1&c=2");
      assertThat(row.get("idempotency_key")).isEqualTo("browser-1");

      int poller = start(statusUrl, ALICE, Map.of());
      awaitEvent(poller, "update");
      noop.runOnce();
      assertThat(noop.awaitTasks(Duration.ofSeconds(10))).isTrue();
      noop.runOnce(); // the transient failure: back to pending, tried again after a backoff
      Map<String, Object> retry = job(awaitEvent(poller, "retry"));
      assertThat(retry.get("attempt")).isEqualTo(1);
      assertThat(retry.get("retry_at")).isNotNull();

      db.update("UPDATE jobs SET delayed_until = now() WHERE uid = ?::uuid", uid(statusUrl));
      runAll(noop);
      assertThat(job(awaitEvent(poller, "done")).get("attempt")).isEqualTo(1);
      assertThat(events(poller, "retry")).as("one retry, reported once").hasSize(1);
    } finally {
      settings.update(NoopService.KIND, io.asyncjobs.settings.SettingsOverride.NONE);
    }
  }

  @Test
  void shouldRejectARefusedEnqueueWithTheProblem() {
    Object refused =
        driver.executeAsyncScript(
            "var done = arguments[arguments.length - 1];"
                + "JobPoller.enqueue('/api/noop', {}, {token: arguments[0],"
                + "  callbackUrl: 'http://example.com/hook'})"
                + ".then(function () { done('enqueued'); })"
                + ".catch(function (e) { done(e.status + ' ' + e.problem.detail); });",
            ALICE);
    assertThat((String) refused)
        .startsWith("400 callback_url's host and port example.com:80 are not among those");
    assertThat(db.query("SELECT count(*) AS n FROM jobs").get(0).get("n")).isEqualTo(0L);
  }

  @Test
  void shouldFollowTheJobOverTheEventStreamWithoutPolling() throws Exception {
    String statusUrl = enqueue(ALICE, "{\"sleep_ms\": 10}");
    int poller = start(statusUrl, ALICE, Map.of());
    assertThat(job(awaitEvent(poller, "update")).get("status")).isEqualTo("pending");

    runAll(noop);

    assertThat(job(awaitEvent(poller, "done")).get("status")).isEqualTo("done");
    // One streamed request carried every update, the final one included.
    assertThat(requests(poller)).containsExactly(statusUrl + "/events");
  }

  @Test
  void shouldReportAFailedJobWithItsError() throws Exception {
    String statusUrl = enqueue(ALICE, "{\"fail\": \"boom\"}");
    int poller = start(statusUrl, ALICE, Map.of());
    awaitEvent(poller, "update");

    runAll(noop);

    Map<String, Object> failed = job(awaitEvent(poller, "failed"));
    assertThat(failed.get("status")).isEqualTo("failed");
    assertThat(failed.get("error")).isEqualTo("IllegalStateException: boom");
    assertThat(failed.get("download_url")).isNull();
    assertThat(awaitEvent(poller, "settled").get("outcome")).isEqualTo("failed");
    assertThat(types(poller)).containsOnlyOnce("failed").doesNotContain("done", "timeout");
  }

  @Test
  void shouldTimeOutOnAJobThatKeepsRunningAndThenStaySilent() throws Exception {
    String statusUrl = enqueue(ALICE, "{\"sleep_ms\": 60000}");
    noop.runOnce();
    long started = System.nanoTime();
    int poller = start(statusUrl, ALICE, Map.of("timeoutMs", 1500));

    Map<String, Object> timeout = awaitEvent(poller, "timeout");
    assertThat(Duration.ofNanos(System.nanoTime() - started))
        .isGreaterThan(Duration.ofMillis(1400));
    assertThat(job(timeout).get("status")).isEqualTo("running");
    assertThat(awaitEvent(poller, "settled").get("outcome")).isEqualTo("timeout");

    // The job fails after all; a second poller sees that, the timed-out one must not.
    db.update("UPDATE jobs SET cancel_requested = true WHERE status = 'running'");
    runAll(noop);
    awaitEvent(start(statusUrl, ALICE, Map.of()), "failed");
    assertThat(types(poller)).containsOnlyOnce("timeout").doesNotContain("done", "failed");
  }

  @Test
  void shouldReportProgressAsTheJobAdvances() throws Exception {
    String statusUrl = enqueue(ALICE, "{\"sleep_ms\": 3000, \"progress_steps\": 6}");
    int poller = start(statusUrl, ALICE, Map.of());
    awaitEvent(poller, "update");

    // The owner writes reported progress to the row during a tick, at most once a second.
    long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
    while (events(poller, "progress").isEmpty()) {
      assertThat(System.nanoTime()).as("a progress event within 15 s").isLessThan(deadline);
      noop.runOnce();
      Thread.sleep(200);
    }
    runAll(noop);
    awaitEvent(poller, "done");

    List<Map<String, Object>> progress = events(poller, "progress");
    double previous = 0;
    for (Map<String, Object> event : progress) {
      @SuppressWarnings("unchecked")
      Map<String, Object> reported = (Map<String, Object>) event.get("progress");
      double fraction = ((Number) reported.get("fraction")).doubleValue();
      assertThat(fraction).isGreaterThan(0).isLessThanOrEqualTo(1).isGreaterThan(previous);
      assertThat(((Number) reported.get("items")).longValue()).isBetween(1L, 6L);
      previous = fraction;
    }
    List<String> types = types(poller);
    assertThat(types.indexOf("progress")).isLessThan(types.indexOf("done"));
  }

  @Test
  void shouldPollTheStatusWhenTheBrowserCannotStream() throws Exception {
    js("delete window.ReadableStream");
    assertThat(js("return typeof ReadableStream")).isEqualTo("undefined");
    String statusUrl = enqueue(ALICE, "{\"sleep_ms\": 10}");
    int poller = start(statusUrl, ALICE, Map.of());
    assertThat(job(awaitEvent(poller, "update")).get("status")).isEqualTo("pending");

    runAll(noop);

    assertThat(job(awaitEvent(poller, "done")).get("status")).isEqualTo("done");
    assertThat(requests(poller)).hasSizeGreaterThanOrEqualTo(2).containsOnly(statusUrl);
  }

  @Test
  void shouldFailAtOnceWhenTheJobIsNotTheCallersOrTheTokenIsMissing() throws Exception {
    String bobs = enqueue(BOB, "{}");

    Map<String, Object> notFound = job(awaitEvent(start(bobs, ALICE, Map.of()), "failed"));
    assertThat(notFound.get("status")).isEqualTo("failed");
    assertThat(notFound.get("http_status")).isEqualTo(404);
    assertThat((String) notFound.get("error")).isEqualTo("HTTP 404: no job " + uid(bobs));
    // The stream was refused, one poll confirmed it: no retries against a 404.
    assertThat(requests(0)).containsExactly(bobs + "/events", bobs);

    Map<String, Object> noToken = job(awaitEvent(start(bobs, null, Map.of()), "failed"));
    assertThat(noToken.get("http_status")).isEqualTo(401);
    assertThat(types(1)).containsOnlyOnce("failed").doesNotContain("done", "update");
  }

  @Test
  void shouldStaySilentAfterCancel() throws Exception {
    String statusUrl = enqueue(ALICE, "{}");
    Object cancelled =
        js(
            "var i = startPoller(arguments[0], arguments[1], {}); handles[i].cancel(); return i",
            statusUrl,
            ALICE);
    int poller = ((Number) cancelled).intValue();

    runAll(noop);

    // A second poller sees the job done; by then the cancelled one would have too.
    awaitEvent(start(statusUrl, ALICE, Map.of()), "done");
    assertThat(events(poller, "settled"))
        .singleElement()
        .extracting(e -> e.get("outcome"))
        .isEqualTo("cancelled");
    assertThat(types(poller)).containsExactly("settled");
  }

  // ---- Helpers ----

  /** Enqueues a noop job as the token's owner and returns its status URL. */
  static String enqueue(String token, String payload) {
    return given()
        .auth()
        .oauth2(token)
        .contentType(ContentType.JSON)
        .body(payload)
        .post("/api/noop")
        .then()
        .statusCode(202)
        .extract()
        .path("status_url");
  }

  static String uid(String statusUrl) {
    return statusUrl.substring(statusUrl.lastIndexOf('/') + 1);
  }

  static Object js(String script, Object... args) {
    return driver.executeScript(script, args);
  }

  /** Starts a poller on the page (fast polling, 30 s timeout unless overridden). */
  static int start(String statusUrl, String token, Map<String, Object> options) {
    Object poller =
        js(
            "return startPoller(arguments[0], arguments[1], arguments[2])",
            statusUrl,
            token,
            new HashMap<>(options));
    return ((Number) poller).intValue();
  }

  /** Every event the page recorded for one poller, in order. */
  static List<Map<String, Object>> events(int poller) {
    try {
      List<Map<String, Object>> all =
          JSON.readValue(
              (String) js("return JSON.stringify(window.events)"), new TypeReference<>() {});
      Predicate<Map<String, Object>> mine = e -> ((Number) e.get("poller")).intValue() == poller;
      return all.stream().filter(mine).toList();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  static List<Map<String, Object>> events(int poller, String type) {
    return events(poller).stream().filter(e -> type.equals(e.get("type"))).toList();
  }

  static List<String> types(int poller) {
    return events(poller).stream().map(e -> (String) e.get("type")).toList();
  }

  @SuppressWarnings("unchecked")
  static List<String> requests(int poller) {
    return (List<String>) js("return window.requests[arguments[0]]", poller);
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> job(Map<String, Object> event) {
    return (Map<String, Object>) event.get("job");
  }

  /** The first event of this type from this poller, waiting up to {@link #WAIT} for it. */
  static Map<String, Object> awaitEvent(int poller, String type) throws InterruptedException {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (true) {
      List<Map<String, Object>> found = events(poller, type);
      if (!found.isEmpty()) {
        return found.get(0);
      }
      if (System.nanoTime() > deadline) {
        fail(
            "poller %d reported no '%s' within %s; page events %s, requests %s, errors %s",
            poller,
            type,
            WAIT,
            js("return JSON.stringify(window.events)"),
            js("return JSON.stringify(window.requests)"),
            js("return JSON.stringify(window.errors)"));
      }
      Thread.sleep(100);
    }
  }
}
