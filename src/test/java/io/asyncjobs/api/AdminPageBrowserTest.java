package io.asyncjobs.api;

import static io.asyncjobs.testing.Jobs.as;
import static io.asyncjobs.testing.Jobs.enqueueNoop;
import static io.asyncjobs.testing.Jobs.runAll;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.asyncjobs.kinds.noop.NoopService;
import io.asyncjobs.queue.JobQueue;
import io.asyncjobs.settings.SettingsOverride;
import io.asyncjobs.settings.SettingsStore;
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
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Keys;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The admin page at {@code /admin} in Debian's headless Chromium, against the running app: what an
 * admin sees and does there, while this test moves the jobs through the engine with {@code
 * runOnce()}.
 */
@QuarkusTest
class AdminPageBrowserTest {

  static final String ADMIN = Tokens.admin("root");
  static final String ALICE = Tokens.user("alice");
  static final String BOB = Tokens.user("bob");
  static final String TOKEN_KEY = "async-jobs.admin-token";
  static final Duration WAIT = Duration.ofSeconds(15);
  static final ObjectMapper JSON = new ObjectMapper();

  static Browser browser;
  static ChromeDriver driver;

  /** Without the trailing slash, so every visit also goes through the redirect. */
  @TestHTTPResource("/admin")
  URL page;

  @Inject Database db;
  @Inject NoopService noop;
  @Inject TestClock clock;
  @Inject JobQueue queue;
  @Inject SettingsStore settings;

  @BeforeAll
  static void startBrowser() throws IOException {
    browser = Browser.start();
    driver = browser.driver();
  }

  @AfterAll
  static void stopBrowser() throws IOException {
    if (browser != null) {
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
    assertThat(driver.getCurrentUrl()).isEqualTo(page + "/");
    await("the sign-in form", d -> d.findElement(By.id("token")).isDisplayed());
  }

  @AfterEach
  void settle() throws InterruptedException {
    // Leaving the page stops its refreshes, and no token is left for the next test's visit.
    browser.js("sessionStorage.clear()");
    driver.get("about:blank");
    settings.update(NoopService.KIND, SettingsOverride.NONE);
    db.update("DELETE FROM service_pauses");
    // Interrupt whatever a test left running, so the next one starts from an idle engine.
    db.update("UPDATE jobs SET cancel_requested = true WHERE status = 'running'");
    noop.runOnce();
    noop.awaitTasks(Duration.ofSeconds(10));
    noop.runOnce();
  }

  @Test
  void shouldSignInWithAnAdminTokenKeepItAcrossAReloadAndForgetItOnSignOut() {
    // The release this replica runs shows before anyone signs in (during a rollout or a rollback
    // two releases answer side by side).
    String version =
        org.eclipse.microprofile.config.ConfigProvider.getConfig()
            .getValue("quarkus.application.version", String.class);
    await(
        "the release", d -> d.findElement(By.id("release")).getText().equals("release " + version));

    signIn(Tokens.signedByStranger("mallory"));
    assertThat(awaitMessage("sign-in-message", "The service refused this token"))
        .contains("the bearer token is invalid or expired");
    assertThat(storedToken()).isNull();
    assertThat(driver.findElement(By.id("dashboard")).isDisplayed()).isFalse();

    signIn(ALICE);
    assertThat(awaitMessage("sign-in-message", "This token is valid but lacks the admin role"))
        .contains("this route needs a role the token lacks");
    assertThat(storedToken()).isNull();

    signIn(ADMIN);
    awaitDashboard();
    assertThat(driver.findElement(By.id("signed-in-as")).getText()).startsWith("Signed in as root");
    assertThat(storedToken()).isEqualTo(ADMIN);

    driver.navigate().refresh();
    awaitDashboard();
    assertThat(storedToken()).isEqualTo(ADMIN);
    assertThat(driver.findElement(By.id("token")).getDomProperty("value")).isEmpty();

    driver.findElement(By.id("sign-out")).click();
    await("the sign-in form again", d -> d.findElement(By.id("token")).isDisplayed());
    assertThat(storedToken()).isNull();
    assertThat(driver.findElements(By.cssSelector("#cards article"))).isEmpty();
    assertThat(driver.findElement(By.id("sign-in-message")).getText()).startsWith("Signed out");
    driver.navigate().refresh();
    await("still signed out after a reload", d -> d.findElement(By.id("token")).isDisplayed());
    assertThat(driver.findElement(By.id("dashboard")).isDisplayed()).isFalse();
  }

  @Test
  void shouldPauseAServiceFromItsCardShowItAsPausedAndResumeIt() throws Exception {
    signIn(ADMIN);
    awaitDashboard();
    WebElement card = card(NoopService.KIND);
    WebElement badge = card.findElement(By.cssSelector("[data-paused-badge]"));
    assertThat(badge.isDisplayed()).isFalse();
    WebElement button = card.findElement(By.cssSelector("button.pause"));
    assertThat(button.getText()).isEqualTo("Pause");

    button.click();

    await("the paused badge", d -> badge.isDisplayed());
    assertThat(badge.getText()).isEqualToIgnoringCase("paused");
    assertThat(button.getText()).isEqualTo("Resume");
    assertThat(card.findElement(By.cssSelector(".pause-note")).getText())
        .contains("Paused")
        .contains("by user:root");
    assertThat(db.query("SELECT paused_by FROM service_pauses WHERE service = 'noop'")).hasSize(1);
    String waiting = enqueueNoop(ALICE, "{}");
    assertThat(noop.runOnce().claimed()).isZero();

    button.click();

    await("the badge gone", d -> !badge.isDisplayed());
    assertThat(button.getText()).isEqualTo("Pause");
    assertThat(db.query("SELECT * FROM service_pauses")).isEmpty();
    assertThat(noop.runOnce().claimed()).isEqualTo(1);
    assertThat(waiting).isNotBlank();
  }

  @Test
  void shouldShowACardPerServiceWithTheCountsOfItsJobs() throws Exception {
    enqueueNoop(ALICE, "{\"artifact_bytes\": 300}");
    enqueueNoop(ALICE, "{}");
    enqueueNoop(BOB, "{\"fail\": true}");
    runAll(noop);
    String pending = enqueueNoop(BOB, "{}");

    signIn(ADMIN);
    awaitDashboard();
    awaitRow(pending);
    WebElement card = card(NoopService.KIND);
    assertThat(card.findElement(By.tagName("h3")).getText()).isEqualTo("No-op (diagnostics)");
    assertThat(count(card, "pending")).isEqualTo("1");
    assertThat(count(card, "running")).isEqualTo("0");
    assertThat(count(card, "done")).isEqualTo("2");
    assertThat(count(card, "failed")).isEqualTo("1");
    assertThat(figure(card, "finished")).isEqualTo("3");
    assertThat(figure(card, "owners"))
        .as("who owns the kind's one shard")
        .contains("(this replica)")
        .contains(" since ");
    assertThat(card.findElements(By.cssSelector(".bars rect:not(.baseline)")))
        .as("a bar for the minute the three jobs finished in")
        .isNotEmpty();
    assertThat(figure(card, "bytes")).isEqualTo("0 B / 300 B");
    assertThat(figure(card, "items")).isEqualTo("2");
    assertThat(figure(card, "oldest")).endsWith("waiting").isNotEqualTo("none waiting");
    assertThat(figure(card, "duration")).contains(" / ");
    assertThat(figure(card, "settings")).contains("7 d kept", "4 at once", "1 h timeout");

    WebElement zip = card("zip");
    for (String status : List.of("pending", "running", "done", "failed")) {
      assertThat(count(zip, status)).isEqualTo("0");
    }
    assertThat(figure(zip, "oldest")).isEqualTo("none waiting");
    browser.screenshot(Path.of("target/admin-page.png"));
  }

  @Test
  void shouldFilterTheJobTableByKindStatusAndOwner() throws Exception {
    String alicesDone = enqueueNoop(ALICE, "{}");
    runAll(noop);
    String bobsFailed = enqueueNoop(BOB, "{\"fail\": true}");
    runAll(noop);
    String bobsPending = enqueueNoop(BOB, "{}");
    String alicesZip =
        queue.enqueue("zip", Map.of("paths", List.of(".")), "user", "alice", null).toString();

    signIn(ADMIN);
    awaitDashboard();
    awaitRows(List.of(alicesZip, bobsPending, bobsFailed, alicesDone));

    new Select(driver.findElement(By.id("filter-kind"))).selectByValue("noop");
    awaitRows(List.of(bobsPending, bobsFailed, alicesDone));
    new Select(driver.findElement(By.id("filter-status"))).selectByValue("failed");
    awaitRows(List.of(bobsFailed));
    assertThat(row(bobsFailed).findElement(By.cssSelector("td.status")).getText())
        .isEqualTo("failed");

    new Select(driver.findElement(By.id("filter-status"))).selectByValue("");
    driver.findElement(By.id("filter-owner-id")).sendKeys("alice", Keys.ENTER);
    awaitRows(List.of(alicesDone));
    assertThat(row(alicesDone).findElement(By.cssSelector("td.owner")).getText())
        .isEqualTo("alice (user)");

    driver.findElement(By.cssSelector("#filters button[type=reset]")).click();
    awaitRows(List.of(alicesZip, bobsPending, bobsFailed, alicesDone));

    // An owner kind without an id: the API says what is missing, and no stale rows stay.
    driver.findElement(By.id("filter-owner-kind")).sendKeys("robot", Keys.ENTER);
    assertThat(awaitMessage("jobs-message", "Could not load the jobs"))
        .isEqualTo("Could not load the jobs: owner_kind and owner_id filter together: give both");
    awaitRows(List.of());
  }

  @Test
  void shouldAdvanceTheProgressBarOfARunningJobAndStopItOnCancel() throws Exception {
    String uid = enqueueNoop(ALICE, "{\"sleep_ms\": 8000, \"progress_steps\": 16}");
    signIn(ADMIN);
    awaitDashboard();
    awaitRows(List.of(uid));

    noop.runOnce(); // claims the job; a worker runs it and reports progress every half second
    // The owner writes reported progress to the row during a tick, at most once a second.
    double first =
        await(
            "progress on the bar",
            d -> {
              noop.runOnce();
              Double now = bar(uid);
              return now != null && now > 0 ? now : null;
            });
    double later =
        await(
            "the bar moving on from " + first,
            d -> {
              noop.runOnce();
              Double now = bar(uid);
              return now != null && now > first ? now : null;
            });
    assertThat(first).isGreaterThan(0);
    assertThat(later).isGreaterThan(first).isLessThanOrEqualTo(1);
    assertThat(row(uid).findElement(By.cssSelector("td.status")).getText()).isEqualTo("running");

    row(uid).findElement(By.cssSelector("button.cancel")).click();
    assertThat(awaitMessage("jobs-message", "Job " + uid))
        .isEqualTo(
            "Job "
                + uid
                + " was asked to stop; it fails once the processing replica interrupts it.");
    assertThat(db.query("SELECT cancel_requested FROM jobs WHERE uid = ?", UUID.fromString(uid)))
        .containsExactly(Map.of("cancel_requested", true));
    runAll(noop);
    awaitStatus(uid, "failed");
    assertThat(row(uid).findElement(By.cssSelector("td.error-text")).getText())
        .isEqualTo("cancelled on request");
  }

  @Test
  void shouldRetryAFailedJobAndCancelAPendingOne() throws Exception {
    String failed = enqueueNoop(ALICE, "{\"fail\": \"once\"}");
    runAll(noop);
    String pending = enqueueNoop(BOB, "{}");
    signIn(ADMIN);
    awaitDashboard();
    awaitRows(List.of(pending, failed));
    assertThat(row(failed).findElement(By.cssSelector("td.error-text")).getText())
        .isEqualTo("IllegalStateException: once");
    assertThat(row(failed).findElements(By.cssSelector("button.cancel"))).isEmpty();
    assertThat(row(pending).findElements(By.cssSelector("button.retry"))).isEmpty();

    row(failed).findElement(By.cssSelector("button.retry")).click();
    assertThat(awaitMessage("jobs-message", "Job " + failed))
        .isEqualTo("Job " + failed + " is pending again.");
    awaitStatus(failed, "pending");
    assertThat(status(failed)).isEqualTo("pending");
    as(ADMIN).get("/api/jobs/" + failed).then().statusCode(200).body("status", equalTo("pending"));

    row(pending).findElement(By.cssSelector("button.cancel")).click();
    assertThat(awaitMessage("jobs-message", "Job " + pending))
        .isEqualTo(
            "Job " + pending + " cancelled: it failed without running (Retry brings it back).");
    awaitStatus(pending, "failed");
    assertThat(status(pending)).isEqualTo("failed");
    assertThat(row(pending).findElements(By.cssSelector("button.retry"))).hasSize(1);
  }

  @Test
  void shouldCountThenCancelAndRetryEveryJobTheFilterMatches() throws Exception {
    for (int i = 0; i < 3; i++) {
      enqueueNoop(BOB, "{}");
    }
    String alicesPending = enqueueNoop(ALICE, "{}");
    signIn(ADMIN);
    awaitDashboard();
    driver.findElement(By.cssSelector("#bulk summary")).click();
    driver.findElement(By.id("filter-owner-id")).sendKeys("bob", Keys.ENTER);

    driver.findElement(By.id("bulk-cancel")).click();
    assertThat(awaitMessage("bulk-message", "3 jobs")).isEqualTo("3 jobs match.");
    assertThat(pendingOf("bob")).as("counting changes nothing").isEqualTo(3);
    WebElement go = driver.findElement(By.id("bulk-go"));
    assertThat(go.getText()).isEqualTo("Cancel 3 jobs");
    go.click();
    assertThat(awaitMessage("bulk-message", "Cancelled")).isEqualTo("Cancelled 3 jobs in 1 batch.");
    assertThat(pendingOf("bob")).isZero();
    assertThat(status(alicesPending)).as("another owner's job").isEqualTo("pending");

    new Select(driver.findElement(By.id("filter-status"))).selectByValue("failed");
    driver.findElement(By.id("bulk-retry")).click();
    assertThat(awaitMessage("bulk-message", "3 jobs")).isEqualTo("3 jobs match.");
    driver.findElement(By.id("bulk-keep")).click();
    assertThat(awaitMessage("bulk-message", "Nothing")).isEqualTo("Nothing changed.");
    assertThat(pendingOf("bob")).isZero();
    driver.findElement(By.id("bulk-retry")).click();
    awaitMessage("bulk-message", "3 jobs");
    driver.findElement(By.id("bulk-go")).click();
    assertThat(awaitMessage("bulk-message", "Retried")).isEqualTo("Retried 3 jobs in 1 batch.");
    assertThat(pendingOf("bob")).isEqualTo(3);

    // A filter the API refuses (a cancel of failed jobs), and one that matches nothing, say so.
    driver.findElement(By.id("bulk-cancel")).click();
    assertThat(awaitMessage("bulk-message", "Could not"))
        .isEqualTo(
            "Could not count the jobs: status for a cancel must be pending or running; got"
                + " \"failed\"");
    assertThat(driver.findElement(By.id("bulk-confirm")).isDisplayed()).isFalse();
    new Select(driver.findElement(By.id("filter-status"))).selectByValue("");
    driver.findElement(By.id("filter-owner-id")).clear();
    driver.findElement(By.id("filter-owner-id")).sendKeys("carol", Keys.ENTER);
    driver.findElement(By.id("bulk-cancel")).click();
    assertThat(awaitMessage("bulk-message", "No job"))
        .isEqualTo("No job matches; nothing to cancel.");
  }

  private long pendingOf(String owner) {
    return (Long)
        db.query("SELECT count(*) AS n FROM jobs WHERE owner_id = ? AND status = 'pending'", owner)
            .get(0)
            .get("n");
  }

  @Test
  void shouldShowTheApiProblemWhenAnActionComesTooLate() throws Exception {
    String uid = enqueueNoop(ALICE, "{}");
    signIn(ADMIN);
    awaitDashboard();
    awaitRows(List.of(uid));

    // Hold the table's refreshes so the row still offers Cancel once the job has finished, as
    // it does for an admin who clicks just after the job finished. A held refresh also means no
    // earlier one is still on its way: the page starts the next only after the last answered.
    browser.js(
        "window.held = 0; var real = window.fetch;"
            + "window.fetch = function (url, init) {"
            + "  if (String(url).indexOf('/api/admin/jobs') === 0) {"
            + "    window.held++; return new Promise(function () {});"
            + "  }"
            + "  return real(url, init);"
            + "};");
    await("a held refresh", d -> ((Number) browser.js("return window.held")).intValue() > 0);
    runAll(noop);
    assertThat(status(uid)).isEqualTo("done");

    row(uid).findElement(By.cssSelector("button.cancel")).click();
    assertThat(awaitMessage("jobs-message", "Could not"))
        .isEqualTo("Could not cancel job " + uid + ": job " + uid + " has already finished");
    assertThat(driver.findElement(By.id("jobs-message")).getAttribute("class")).contains("error");
    assertThat(status(uid)).isEqualTo("done");
  }

  @Test
  void shouldSaveSettingsAndShowWhyABadValueIsRefused() {
    signIn(ADMIN);
    awaitDashboard();
    WebElement card = card(NoopService.KIND);
    // Another admin's change since the card was drawn shows once the editor opens.
    settings.update(NoopService.KIND, new SettingsOverride(null, 3, null, null, "fair"));
    card.findElement(By.tagName("summary")).click();
    WebElement form = card.findElement(By.cssSelector("form.settings"));
    WebElement maxConcurrent = form.findElement(By.name("max_concurrent"));
    WebElement retention = form.findElement(By.name("retention_seconds"));
    WebElement claimOrder = form.findElement(By.name("claim_order"));
    await("the current settings", d -> "3".equals(maxConcurrent.getDomProperty("value")));
    await("the editor ready", d -> form.getDomAttribute("aria-busy") == null);
    assertThat(claimOrder.getDomProperty("value")).isEqualTo("fair");
    assertThat(maxConcurrent.getDomAttribute("placeholder")).isEqualTo("4");
    assertThat(retention.getDomProperty("value")).isEmpty();
    assertThat(
            form.findElement(
                    By.cssSelector("label[for='" + maxConcurrent.getDomAttribute("id") + "']"))
                .getText())
        .isEqualTo("Jobs at once");

    maxConcurrent.clear();
    maxConcurrent.sendKeys("2");
    retention.sendKeys("120");
    form.findElement(By.cssSelector("button[type=submit]")).click();
    await(
        "the settings saved",
        d -> form.findElement(By.cssSelector(".message")).getText().startsWith("Saved"));
    as(ADMIN)
        .get("/api/admin/services/noop/settings")
        .then()
        .statusCode(200)
        .body("overrides.max_concurrent", equalTo(2))
        .body("overrides.retention_seconds", equalTo(120))
        .body("overrides.job_timeout_seconds", nullValue())
        .body("overrides.claim_order", equalTo("fair"))
        .body("effective.max_concurrent", equalTo(2));
    assertThat(figure(card, "settings"))
        .contains("2 min kept (override)", "2 at once (override)", "fair order (override)");

    new org.openqa.selenium.support.ui.Select(claimOrder).selectByValue("");
    form.findElement(By.cssSelector("button[type=submit]")).click();
    await(
        "the claim order back to the configured one",
        d -> settings.overrides(NoopService.KIND).claimOrder() == null);
    assertThat(settings.effective(NoopService.KIND).claimOrder().value()).isEqualTo("fifo");

    maxConcurrent.clear();
    maxConcurrent.sendKeys("0");
    form.findElement(By.cssSelector("button[type=submit]")).click();
    await(
        "the refusal",
        d -> form.findElement(By.cssSelector(".message")).getText().startsWith("Not saved"));
    assertThat(form.findElement(By.cssSelector(".message")).getText())
        .isEqualTo(
            "Not saved: the body has an invalid value: max_concurrent must be between 1 and 256");
    assertThat(settings.effective(NoopService.KIND).maxConcurrent()).isEqualTo(2);
  }

  @Test
  void shouldShowWhatCallersWroteAsTextNotAsMarkup() throws Exception {
    String owner = "<img src=x onerror=\"window.pwned = 'owner'\">";
    String message = "<img src=x onerror=\"window.pwned = 'error'\"><b>bold</b>";
    String uid = enqueueNoop(Tokens.user(owner), JSON.writeValueAsString(Map.of("fail", message)));
    runAll(noop);
    String alices = enqueueNoop(ALICE, "{}");

    signIn(ADMIN);
    awaitDashboard();
    awaitRows(List.of(alices, uid));
    assertThat(row(uid).findElement(By.cssSelector("td.owner")).getText())
        .isEqualTo(owner + " (user)");
    assertThat(row(uid).findElement(By.cssSelector("td.error-text")).getText())
        .isEqualTo("IllegalStateException: " + message);
    assertThat(browser.js("return document.querySelectorAll('img, b').length")).isEqualTo(0L);
    assertThat(browser.js("return window.pwned === undefined")).isEqualTo(true);

    // The same id, typed into the owner filter, goes through the URL intact.
    driver.findElement(By.id("filter-owner-id")).sendKeys(owner, Keys.ENTER);
    awaitRows(List.of(uid));
  }

  @Test
  void shouldServeThePageUnderAPolicyThatAllowsOnlyItsOwnFiles() {
    given()
        .redirects()
        .follow(false)
        .get("/admin")
        .then()
        .statusCode(301)
        .header("Location", "admin/");
    String policy =
        given()
            .get("/admin/")
            .then()
            .statusCode(200)
            .contentType(ContentType.HTML)
            .header("X-Content-Type-Options", "nosniff")
            .extract()
            .header("Content-Security-Policy");
    assertThat(policy)
        .contains("default-src 'none'", "script-src 'self'", "style-src 'self'")
        .contains("connect-src 'self'", "frame-ancestors 'none'")
        .doesNotContain("unsafe-inline", "unsafe-eval", "*", "http");

    signIn(ADMIN);
    awaitDashboard();
    card(NoopService.KIND);
    assertThat(browser.js("return getComputedStyle(document.querySelector('main')).maxWidth"))
        .as("admin.css applies")
        .isNotEqualTo("none");
    assertThat(browser.console())
        .as("nothing the page itself does breaks the policy")
        .noneMatch(line -> line.contains("Content Security Policy"));

    Object ran =
        browser.js(
            "var s = document.createElement('script'); s.textContent = 'window.inlineRan = true';"
                + "document.body.appendChild(s); return window.inlineRan === true");
    assertThat(ran).as("an injected inline script runs").isEqualTo(false);
    assertThat(browser.console()).anyMatch(line -> line.contains("Content Security Policy"));
  }

  // ---- Helpers ----

  String status(String uid) {
    return (String)
        db.query("SELECT status FROM jobs WHERE uid = ?", UUID.fromString(uid))
            .get(0)
            .get("status");
  }

  static <T> T await(String what, Function<WebDriver, T> condition) {
    return new WebDriverWait(driver, WAIT)
        .pollingEvery(Duration.ofMillis(100))
        .ignoring(StaleElementReferenceException.class)
        .withMessage(
            () -> what + "; the page shows: " + driver.findElement(By.tagName("body")).getText())
        .until(condition);
  }

  static void signIn(String token) {
    WebElement field = driver.findElement(By.id("token"));
    field.clear();
    // Pasted, not typed: a token is a long line and typing it key by key is slow.
    browser.js("arguments[0].value = arguments[1]", field, token);
    driver.findElement(By.cssSelector("#sign-in-form button[type=submit]")).click();
  }

  static void awaitDashboard() {
    await("the dashboard", d -> d.findElement(By.id("dashboard")).isDisplayed());
  }

  /** The message in the element with this id, once it starts with {@code start}. */
  static String awaitMessage(String id, String start) {
    return await(
        "a message in #" + id + " starting with " + start,
        d -> {
          String text = d.findElement(By.id(id)).getText();
          return text.startsWith(start) ? text : null;
        });
  }

  static String storedToken() {
    return (String) browser.js("return sessionStorage.getItem(arguments[0])", TOKEN_KEY);
  }

  static WebElement card(String service) {
    return await(
        "the card of " + service,
        d -> d.findElement(By.cssSelector("#cards article[data-service='" + service + "']")));
  }

  static String count(WebElement card, String status) {
    return card.findElement(By.cssSelector("dd[data-count='" + status + "']")).getText();
  }

  static String figure(WebElement card, String name) {
    return card.findElement(By.cssSelector("dd[data-figure='" + name + "']")).getText();
  }

  static WebElement row(String uid) {
    return driver.findElement(By.cssSelector("#jobs tbody tr[data-uid='" + uid + "']"));
  }

  /** Waits until the table shows exactly these jobs, in this order. */
  static void awaitRows(List<String> uids) {
    await(
        "the rows " + uids,
        d -> {
          List<String> shown =
              d.findElements(By.cssSelector("#jobs tbody tr[data-uid]")).stream()
                  .map(r -> r.getDomAttribute("data-uid"))
                  .toList();
          return shown.equals(uids);
        });
  }

  /** Waits until the table shows this job, among others. */
  static void awaitRow(String uid) {
    await("the row of " + uid, d -> row(uid));
  }

  static void awaitStatus(String uid, String status) {
    await(
        "job " + uid + " shown as " + status,
        d -> status.equals(row(uid).getDomAttribute("data-status")));
  }

  /** The value of a job's progress bar, or null while it shows none. */
  static Double bar(String uid) {
    Object value =
        browser.js(
            "var bar = document.querySelector('#jobs tr[data-uid=\"' + arguments[0] + '\"] progress');"
                + "return bar && bar.hasAttribute('value') ? bar.value : null",
            uid);
    return value == null ? null : ((Number) value).doubleValue();
  }
}
