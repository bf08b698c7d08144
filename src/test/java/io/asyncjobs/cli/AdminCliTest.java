package io.asyncjobs.cli;

import static io.asyncjobs.testing.Jobs.runAll;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.asyncjobs.files.Artifacts;
import io.asyncjobs.kinds.noop.NoopService;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobQueue;
import io.asyncjobs.queue.JobStatus;
import io.asyncjobs.settings.SettingsOverride;
import io.asyncjobs.settings.SettingsStore;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.TestClock;
import io.asyncjobs.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The admin CLI's commands, run in-process against the real database: what they print, what they
 * change, and their exit codes. Where the API refuses the same input, the CLI must use its words.
 */
@QuarkusTest
class AdminCliTest {

  private static final Instant T0 = Instant.parse("2026-05-01T08:00:00Z");
  private static final String ADMIN = Tokens.admin("root");
  private static final String MISSING = "0190a5c8-7c1e-7b3a-9f00-1a2b3c4d5e6f";

  @Inject AdminCli cli;
  @Inject JobQueue queue;
  @Inject NoopService noop;
  @Inject Artifacts artifacts;
  @Inject SettingsStore settings;
  @Inject TestClock clock;
  @Inject Database db;
  @Inject io.asyncjobs.lock.OwnerLocks locks;

  @BeforeEach
  void clean() {
    db.clearJobs();
    db.update("DELETE FROM service_settings");
    db.update("DELETE FROM service_pauses");
  }

  @AfterEach
  void reset() throws Exception {
    // Reap what a test left running, without claiming what it left pending.
    db.update("DELETE FROM jobs WHERE status = 'pending'");
    assertThat(noop.awaitTasks(Duration.ofSeconds(10))).isTrue();
    noop.runOnce();
    clock.reset();
    db.update("DELETE FROM service_settings");
    db.update("DELETE FROM service_pauses");
  }

  // ---- list ------------------------------------------------------------------------------

  @Test
  void shouldListOnlyTheJobsTheFiltersMatchAsATableAndAsJson() throws Exception {
    UUID alicesFailed = enqueue("noop", Map.of("fail", "boom"), "alice");
    runAll(noop);
    UUID alicesPending = enqueue("noop", Map.of(), "alice");
    UUID bobsPending = enqueue("noop", Map.of(), "bob");
    UUID bobsZip = enqueue("zip", Map.of("paths", List.of(".")), "bob");

    Result table = run("list", "--kind", "noop", "--status", "failed");
    assertThat(table.code()).isZero();
    assertThat(table.out().lines().findFirst().orElseThrow())
        .startsWith("UID")
        .contains("KIND", "STATUS", "OWNER", "CREATED", "FINISHED", "ERROR");
    assertThat(table.out().lines().skip(1).toList())
        .singleElement()
        .asString()
        .contains(alicesFailed.toString(), "noop", "failed", "user:alice", "boom");

    JsonNode page = run("list", "--kind", "noop", "--status", "failed", "--json").json();
    assertThat(uids(page)).containsExactly(alicesFailed.toString());
    assertThat(page.get("jobs").get(0).get("error").asText())
        .isEqualTo("IllegalStateException: boom");
    assertThat(page.get("next").isNull()).isTrue();

    assertThat(uids(run("list", "--owner", "user:bob", "--json").json()))
        .containsExactly(bobsZip.toString(), bobsPending.toString());
    assertThat(uids(run("list", "--status", "pending", "--kind", "noop", "--json").json()))
        .containsExactly(bobsPending.toString(), alicesPending.toString());
    assertThat(run("list", "--kind", "seo").out()).isEqualTo("no jobs\n");
  }

  @Test
  void shouldNotPassEscapeSequencesFromJobTextToTheTerminal() throws Exception {
    // A caller chooses a job's name and, through its payload, its error: an admin listing jobs
    // must not have escape sequences (clipboard writes, retitling, hidden text) run by the
    // terminal.
    String hostile = "x\u001b]52;c;aGk=\u0007y\u001b[2Jz\u202egnp.exe\u009b31m";
    UUID uid = queue.enqueue("noop", Map.of("fail", hostile), "user", "alice", hostile);
    runAll(noop);

    for (Result result : List.of(run("list"), run("show", uid.toString()))) {
      assertThat(result.code()).isZero();
      assertThat(result.out())
          .contains("x?]52;c;aGk=?y?[2Jz?gnp.exe?31m")
          .doesNotContain("\u001b", "\u0007", "\u202e", "\u009b");
    }
    assertThat(run("list", "--json").json().get("jobs").get(0).get("error").asText())
        .as("JSON keeps the text as it is")
        .contains(hostile);
  }

  @Test
  void shouldPageThroughJobsNewestFirstOrListThemAll() throws Exception {
    List<UUID> enqueued = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      enqueued.add(enqueue("noop", Map.of(), "alice"));
    }

    JsonNode first = run("list", "--limit", "2", "--json").json();
    assertThat(uids(first)).containsExactly(enqueued.get(2).toString(), enqueued.get(1).toString());
    String next = first.get("next").asText();
    assertThat(next).isEqualTo(enqueued.get(1).toString());
    JsonNode second = run("list", "--limit", "2", "--before", next, "--json").json();
    assertThat(uids(second)).containsExactly(enqueued.get(0).toString());
    assertThat(second.get("next").isNull()).isTrue();

    assertThat(run("list", "--limit", "2").out()).contains("more: add --before " + next);
    assertThat(uids(run("list", "--all", "--limit", "1", "--json").json()))
        .containsExactly(
            enqueued.get(2).toString(), enqueued.get(1).toString(), enqueued.get(0).toString());
    Result all = run("list", "--all", "--limit", "1");
    assertThat(all.out().lines().filter(line -> line.startsWith("UID"))).hasSize(1);
    assertThat(all.out().lines().skip(1)).hasSize(3);
  }

  @Test
  void shouldRefuseBadFiltersWithTheApisWords() {
    for (String[] filter :
        List.of(
            new String[] {"status", "lost"},
            new String[] {"kind", "nosuch"},
            new String[] {"limit", "0"},
            new String[] {"before", "yesterday"})) {
      Result result = run("list", "--" + filter[0], filter[1]);
      String apiDetail =
          given()
              .auth()
              .oauth2(ADMIN)
              .queryParam(filter[0], filter[1])
              .get("/api/admin/jobs")
              .then()
              .statusCode(400)
              .extract()
              .path("detail");
      assertThat(result.code()).as(filter[0]).isEqualTo(AdminCli.USAGE);
      assertThat(result.err())
          .startsWith("error: " + apiDetail + "\n")
          .contains("usage: admin list");
    }
    assertThat(run("list", "--owner", "alice").err())
        .contains("--owner must be OWNER_KIND:OWNER_ID, such as user:alice");
  }

  // ---- show, retry, cancel ---------------------------------------------------------------

  @Test
  void shouldShowAJobAndSayWhenThereIsNone() throws Exception {
    UUID uid = enqueue("noop", Map.of("fail", "no disk"), "alice");
    runAll(noop);

    Result shown = run("show", uid.toString());
    assertThat(shown.code()).isZero();
    assertThat(shown.out())
        .contains("uid ", uid.toString())
        .containsPattern("status +failed")
        .containsPattern("owner +user:alice")
        .containsPattern("error +IllegalStateException: no disk");
    JsonNode job = run("show", uid.toString(), "--json").json();
    assertThat(job.get("status").asText()).isEqualTo("failed");
    assertThat(job.get("owner_id").asText()).isEqualTo("alice");

    Result missing = run("show", MISSING);
    assertThat(missing.code()).isEqualTo(AdminCli.NOT_FOUND);
    assertThat(missing.out()).isEmpty();
    assertThat(missing.err()).isEqualTo("error: no job " + MISSING + "\n");
    Result malformed = run("show", "zzz");
    assertThat(malformed.code()).isEqualTo(AdminCli.USAGE);
    assertThat(malformed.err()).contains("uid must be a uuid");
  }

  @Test
  void shouldRetryAFailedJobOnly() throws Exception {
    UUID uid = enqueue("noop", Map.of("fail", "once"), "alice");
    Result early = run("retry", uid.toString());
    assertThat(early.code()).isEqualTo(AdminCli.CONFLICT);
    assertThat(early.err()).isEqualTo("error: only a failed job can be retried\n");

    runAll(noop);
    assertThat(queue.getJob(uid).orElseThrow().status).isEqualTo(JobStatus.FAILED);
    Result retried = run("retry", uid.toString(), "--json");

    assertThat(retried.code()).isZero();
    assertThat(retried.json().get("status").asText()).isEqualTo("pending");
    Job job = queue.getJob(uid).orElseThrow();
    assertThat(job.status).isEqualTo(JobStatus.PENDING);
    assertThat(job.error).isNull();
    assertThat(noop.runOnce().claimed()).as("the owner runs it again").isEqualTo(1);
    assertThat(run("retry", MISSING).code()).isEqualTo(AdminCli.NOT_FOUND);
  }

  @Test
  void shouldCancelAPendingJobAndAskTheOwnerToStopARunningOne() throws Exception {
    UUID pending = enqueue("noop", Map.of(), "alice");
    Result cancelled = run("cancel", pending.toString());
    assertThat(cancelled.code()).isZero();
    assertThat(cancelled.out()).contains("cancelled");
    Job failed = queue.getJob(pending).orElseThrow();
    assertThat(failed.status).isEqualTo(JobStatus.FAILED);
    assertThat(failed.error).isEqualTo("cancelled on request");

    UUID running = enqueue("noop", Map.of("sleep_ms", 60_000), "alice");
    assertThat(noop.runOnce().claimed()).isEqualTo(1);
    JsonNode stopping = run("cancel", running.toString(), "--json").json();
    assertThat(stopping.get("status").asText()).isEqualTo("running");
    assertThat(stopping.get("cancel_requested").asBoolean()).isTrue();
    noop.runOnce(); // the owner's next tick interrupts it
    assertThat(queue.getJob(running).orElseThrow().error).isEqualTo("cancelled on request");

    Result finished = run("cancel", pending.toString());
    assertThat(finished.code()).isEqualTo(AdminCli.CONFLICT);
    assertThat(finished.err()).isEqualTo("error: job " + pending + " has already finished\n");
    assertThat(run("cancel", MISSING).code()).isEqualTo(AdminCli.NOT_FOUND);
  }

  // ---- prune -----------------------------------------------------------------------------

  @Test
  void shouldPruneOnlyExpiredFinishedJobsAfterTheirCleanup() throws Exception {
    clock.set(T0);
    UUID expiring = enqueue("noop", Map.of("artifact_bytes", 100), "alice");
    UUID kept = enqueue("noop", Map.of("artifact_bytes", 100), "alice");
    runAll(noop);
    db.update(
        "UPDATE jobs SET expires_at = ? WHERE uid = ?",
        Timestamp.from(T0.plus(Duration.ofDays(30))),
        kept);
    UUID pending = enqueue("noop", Map.of(), "alice");
    db.update(
        "UPDATE jobs SET expires_at = ? WHERE uid = ?",
        Timestamp.from(T0.minusSeconds(1)),
        pending);
    Path artifact = artifacts.location("noop", expiring);
    assertThat(artifact).isDirectory();
    clock.advance(Duration.ofDays(7).plusSeconds(1)); // noop keeps a job seven days

    JsonNode dryRun = run("prune", "--dry-run", "--json").json();
    assertThat(dryRun.get("dry_run").asBoolean()).isTrue();
    assertThat(kind(dryRun, "noop").get("expired").asLong()).isEqualTo(1);
    assertThat(artifact).as("a dry run changes nothing").isDirectory();
    assertThat(queue.getJob(expiring)).isPresent();

    Result pruned = run("prune", "--kind", "noop");
    assertThat(pruned.code()).isZero();
    assertThat(pruned.out()).containsPattern("noop +1 +0");
    assertThat(artifact).as("the kind's cleanup removed the files").doesNotExist();
    assertThat(queue.getJob(expiring)).isEmpty();
    assertThat(queue.getJob(kept)).isPresent();
    assertThat(artifacts.location("noop", kept)).isDirectory();
    assertThat(queue.getJob(pending).orElseThrow().status).isEqualTo(JobStatus.PENDING);

    JsonNode again = run("prune", "--json").json();
    assertThat(again.get("dry_run").asBoolean()).isFalse();
    assertThat(kind(again, "noop").get("deleted").asInt()).isZero();
    assertThat(run("prune", "--kind", "nosuch").code()).isEqualTo(AdminCli.USAGE);
  }

  @Test
  void shouldPruneEveryExpiredJobNotJustOneSweepBatch() {
    // 250 expired jobs: more than two batches of jobs.sweep-batch-size (100).
    db.update(
        "INSERT INTO jobs (uid, kind, status, created_at, updated_at, completed_at, expires_at)"
            + " SELECT gen_random_uuid(), 'noop', 'done', now(), now(), now(),"
            + " now() - interval '1 minute' FROM generate_series(1, 250)");

    JsonNode dryRun = run("prune", "--kind", "noop", "--dry-run", "--json").json();
    assertThat(kind(dryRun, "noop").get("expired").asInt()).isEqualTo(250);
    JsonNode pruned = run("prune", "--kind", "noop", "--json").json();

    assertThat(kind(pruned, "noop").get("deleted").asInt()).isEqualTo(250);
    assertThat(db.query("SELECT uid FROM jobs")).isEmpty();
  }

  // ---- settings --------------------------------------------------------------------------

  @Test
  void shouldSetShowAndResetAServicesSettings() {
    Result set = run("settings", "noop", "--max-concurrent", "2", "--retention-seconds=120");
    assertThat(set.code()).isZero();
    assertThat(set.out()).containsPattern("noop +120\\* +2\\* +3600 +3 +fifo +0 +0 +1\n");
    assertThat(settings.overrides("noop")).isEqualTo(new SettingsOverride(120L, 2, null, null));

    // A later change keeps the overrides it does not name.
    JsonNode changed = run("settings", "noop", "--job-timeout-seconds", "60", "--json").json();
    assertThat(settings.overrides("noop")).isEqualTo(new SettingsOverride(120L, 2, 60L, null));
    assertThat(changed.get("effective").get("job_timeout_seconds").asLong()).isEqualTo(60);
    assertThat(changed.get("configured").get("max_concurrent").asInt()).isEqualTo(4);

    JsonNode all = run("settings", "--json").json();
    assertThat(all.findValuesAsText("service")).contains("noop", "zip").isSorted();
    assertThat(run("settings").out()).contains("* overridden at run time");
    assertThat(run("settings", "noop").out())
        .containsPattern("noop +120\\* +2\\* +60\\* +3 +fifo +0 +0 +1\n");
    Result fair = run("settings", "noop", "--claim-order", "fair");
    assertThat(fair.out()).containsPattern("noop +120\\* +2\\* +60\\* +3 +fair\\* +0 +0 +1\n");
    assertThat(settings.effective("noop").claimOrder().value()).isEqualTo("fair");
    Result attempts = run("settings", "noop", "--max-attempts", "5");
    assertThat(attempts.out())
        .containsPattern("noop +120\\* +2\\* +60\\* +3 +fair\\* +0 +0 +5\\*\n");
    assertThat(settings.effective("noop").maxAttempts()).isEqualTo(5);
    Result noAttempts = run("settings", "noop", "--max-attempts", "0");
    assertThat(noAttempts.code()).isEqualTo(AdminCli.USAGE);
    assertThat(noAttempts.err()).contains("max_attempts must be between 1 (no retry) and 100");
    Result wrong = run("settings", "noop", "--claim-order", "lifo");
    assertThat(wrong.code()).isEqualTo(AdminCli.USAGE);
    assertThat(wrong.err()).contains("claim_order must be fifo or fair, was 'lifo'");
    assertThat(settings.overrides("noop").claimOrder()).isEqualTo("fair");

    Result reset = run("settings", "noop", "--reset");
    assertThat(reset.code()).isZero();
    assertThat(reset.out()).containsPattern("noop +604800 +4 +3600 +3 +fifo +0 +0 +1\n");
    assertThat(settings.overrides("noop")).isEqualTo(SettingsOverride.NONE);
  }

  @Test
  void shouldPauseAServiceThroughAResetOfItsSettingsAndResumeIt() throws Exception {
    Result paused = run("pause", "noop", "--reason", "disk swap");
    assertThat(paused.code()).as(paused.err()).isZero();
    assertThat(paused.out()).contains("noop is paused since").contains("(disk swap)");
    UUID waiting = enqueue("noop", Map.of(), "alice");
    assertThat(noop.runOnce().claimed()).isZero();

    // A reset of the overrides is not a resume.
    assertThat(run("settings", "noop", "--reset").code()).isZero();
    JsonNode again = run("pause", "noop", "--json").json();
    assertThat(again.get("paused").asBoolean()).isTrue();
    assertThat(again.get("reason").asText()).isEqualTo("disk swap");
    assertThat(again.get("paused_by").asText()).startsWith("cli:");
    assertThat(noop.runOnce().claimed()).isZero();
    assertThat(queue.getJob(waiting).orElseThrow().status).isEqualTo(JobStatus.PENDING);

    Result resumed = run("resume", "noop");
    assertThat(resumed.code()).isZero();
    assertThat(resumed.out()).contains("noop runs");
    runAll(noop);
    assertThat(queue.getJob(waiting).orElseThrow().status).isEqualTo(JobStatus.DONE);

    Result unknown = run("pause", "nosuch");
    assertThat(unknown.code()).isEqualTo(AdminCli.NOT_FOUND);
    assertThat(unknown.err()).contains("no service \"nosuch\"");
    assertThat(run("resume").code()).isEqualTo(AdminCli.USAGE);
  }

  @Test
  void shouldCountWithADryRunThenCancelAndRetryInBulk() throws Exception {
    List<UUID> alices = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      alices.add(enqueue("noop", Map.of(), "alice"));
    }
    UUID bobs = enqueue("noop", Map.of(), "bob");

    Result dry = run("bulk", "cancel", "--kind", "noop", "--owner", "user:alice", "--dry-run");
    assertThat(dry.code()).as(dry.err()).isZero();
    assertThat(dry.out()).contains("3 job(s) match").contains("nothing was changed (dry run)");
    assertThat(queue.getJob(alices.get(0)).orElseThrow().status).isEqualTo(JobStatus.PENDING);

    Result done = run("bulk", "cancel", "--owner", "user:alice");
    assertThat(done.out()).contains("3 job(s) matched; 3 cancelled in 1 batch(es)");
    for (UUID uid : alices) {
      assertThat(queue.getJob(uid).orElseThrow().status).isEqualTo(JobStatus.FAILED);
    }
    assertThat(queue.getJob(bobs).orElseThrow().status).isEqualTo(JobStatus.PENDING);

    JsonNode retried =
        run("bulk", "retry", "--kind", "noop", "--created-before", "2100-01-01T00:00:00Z", "--json")
            .json();
    assertThat(retried.get("affected").asLong()).isEqualTo(3);
    assertThat(retried.get("dry_run").asBoolean()).isFalse();
    assertThat(queue.getJob(alices.get(2)).orElseThrow().status).isEqualTo(JobStatus.PENDING);

    Result none = run("bulk", "cancel");
    assertThat(none.code()).isEqualTo(AdminCli.USAGE);
    assertThat(none.err()).contains("give at least one filter");
    Result bad = run("bulk", "retry", "--status", "done", "--all");
    assertThat(bad.code()).isEqualTo(AdminCli.USAGE);
    assertThat(bad.err()).contains("status for a retry must be failed; got \"done\"");
    assertThat(run("bulk", "delete", "--all").err()).contains("bulk takes cancel or retry");
  }

  @Test
  void shouldRefuseBadSettingsWithTheApisWordsAndKeepTheOldOnes() {
    settings.update("noop", new SettingsOverride(null, 3, null, null));
    for (String[] bad :
        List.of(
            new String[] {"max_concurrent", "0"},
            new String[] {"retention_seconds", "-5"},
            new String[] {"job_timeout_seconds", "315360001"},
            new String[] {"max_retries", "101"})) {
      Result result = run("settings", "noop", "--" + bad[0].replace('_', '-'), bad[1]);
      String apiDetail =
          given()
              .auth()
              .oauth2(ADMIN)
              .contentType(ContentType.JSON)
              .body("{\"" + bad[0] + "\": " + bad[1] + "}")
              .put("/api/admin/services/noop/settings")
              .then()
              .statusCode(400)
              .extract()
              .path("detail");
      String message = result.err().lines().findFirst().orElseThrow().substring("error: ".length());
      assertThat(result.code()).as(bad[0] + " " + bad[1]).isEqualTo(AdminCli.USAGE);
      assertThat(message).as(bad[0] + " " + bad[1]).startsWith(bad[0] + " must be between");
      assertThat(apiDetail).endsWith(message);
    }
    // Beyond int range the API's JSON reader refuses first; the CLI still names the range.
    assertThat(run("settings", "noop", "--max-concurrent", "99999999999").err())
        .startsWith("error: max_concurrent must be between 1 and 256");
    assertThat(run("settings", "noop", "--max-concurrent", "many").err())
        .startsWith("error: --max-concurrent must be a whole number; got \"many\"");
    Result unknown = run("settings", "nosuch", "--max-concurrent", "2");
    assertThat(unknown.code()).isEqualTo(AdminCli.NOT_FOUND);
    assertThat(unknown.err()).isEqualTo("error: no service \"nosuch\"\n");
    assertThat(settings.overrides("noop")).isEqualTo(new SettingsOverride(null, 3, null, null));
  }

  // ---- usage -----------------------------------------------------------------------------

  @Test
  void shouldExplainUsageErrorsWithExitCodeTwo() {
    assertThat(run().code()).isEqualTo(AdminCli.USAGE);
    assertThat(run().err()).contains("Usage: admin <command>", "list", "prune", "settings");
    for (List<String> wrong :
        List.of(
            List.of("frob"),
            List.of("list", "--bogus"),
            List.of("list", "--limit"),
            List.of("list", "extra"),
            List.of("list", "--all", "--before", MISSING),
            List.of("list", "--json", "--json"),
            List.of("show"),
            List.of("show", MISSING, MISSING),
            List.of("show", "--json=yes", MISSING),
            List.of("settings", "--max-concurrent", "2"),
            List.of("settings", "noop", "--reset", "--max-retries", "1"))) {
      Result result = run(wrong.toArray(String[]::new));
      assertThat(result.code()).as(String.join(" ", wrong)).isEqualTo(AdminCli.USAGE);
      assertThat(result.err()).as(String.join(" ", wrong)).startsWith("error: ").contains("sage");
      assertThat(result.out()).isEmpty();
    }
    assertThat(run("list", "--bogus").err())
        .startsWith("error: unknown option \"--bogus\"\nusage: admin list");
  }

  @Test
  void shouldShowWhoOwnsEachShardAndWhatItHolds() {
    enqueue(NoopService.KIND, Map.of("sleep_ms", 1), "alice");
    // A shard of an earlier mapping that still has a job: listed as retired, held by nobody.
    UUID retired = enqueue(NoopService.KIND, Map.of("sleep_ms", 1), "alice");
    db.update("UPDATE jobs SET shard = 'noop-3' WHERE uid = ?", retired);
    String self = locks.primary().identity();
    long epoch = locks.primary().status().epoch();

    JsonNode all = run("owners", "--json").json();
    List<String> kinds = new ArrayList<>();
    for (JsonNode row : all.get("shards")) {
      kinds.add(row.get("kind").asText());
    }
    assertThat(kinds).contains("zip", "fork", "seo", "deepsearch", "seo_meta", NoopService.KIND);
    JsonNode noop = run("owners", NoopService.KIND, "--json").json().get("shards");
    assertThat(noop).hasSize(2);
    JsonNode current = noop.get(0);
    assertThat(current.get("shard").asText()).isEqualTo("all");
    assertThat(current.get("lock").asText()).isEqualTo(locks.primary().name());
    assertThat(current.get("holder").asText()).isEqualTo(self);
    assertThat(current.get("held_through").asText()).isEqualTo("advisory-lock");
    assertThat(current.get("epoch").asLong()).isEqualTo(epoch);
    assertThat(current.get("since").asText()).isNotEmpty();
    assertThat(current.get("pending").asLong()).isEqualTo(1);
    assertThat(current.get("retired").asBoolean()).isFalse();
    JsonNode old = noop.get(1);
    assertThat(old.get("shard").asText()).isEqualTo("noop-3");
    assertThat(old.get("lock").asText()).isEqualTo(locks.primary().name() + "-noop-3");
    assertThat(old.get("holder").isNull()).isTrue();
    assertThat(old.get("pending").asLong()).isEqualTo(1);
    assertThat(old.get("retired").asBoolean()).isTrue();

    Result table = run("owners", NoopService.KIND);
    assertThat(table.code()).as(table.err()).isZero();
    assertThat(table.out().lines().toList())
        .hasSize(3)
        .satisfies(lines -> assertThat(lines.get(0)).startsWith("KIND").contains("HOLDER", "EPOCH"))
        .satisfies(
            lines -> assertThat(lines.get(1)).contains("all", self, Long.toString(epoch), " 1 "))
        .satisfies(lines -> assertThat(lines.get(2)).contains("noop-3 (retired)", " - "));

    Result unknown = run("owners", "nosuch");
    assertThat(unknown.code()).isEqualTo(AdminCli.NOT_FOUND);
    assertThat(unknown.err()).contains("no job service is called \"nosuch\"");
    assertThat(run("owners", "zip", "seo").code()).isEqualTo(AdminCli.USAGE);
  }

  @Test
  void shouldPrintHelpForEveryCommand() {
    Result overview = run("--help");
    assertThat(overview.code()).isZero();
    assertThat(overview.out()).contains("Exit codes: 0 done, 1 failed, 2 usage error");
    for (String command :
        List.of(
            "list",
            "show",
            "retry",
            "cancel",
            "prune",
            "settings",
            "owners",
            "pause",
            "resume",
            "bulk")) {
      Result help = run(command, "--help");
      assertThat(help.code()).isZero();
      assertThat(help.out()).startsWith("Usage: admin " + command);
      assertThat(help.err()).isEmpty();
    }
    assertThat(run("list", "-h").out()).contains("--owner KIND:ID");
  }

  // ---- helpers ---------------------------------------------------------------------------

  private UUID enqueue(String kind, Map<String, Object> payload, String owner) {
    return queue.enqueue(kind, payload, "user", owner, null);
  }

  private static List<String> uids(JsonNode page) {
    return page.get("jobs").findValuesAsText("uid");
  }

  private static JsonNode kind(JsonNode report, String kind) {
    for (JsonNode row : report.get("kinds")) {
      if (row.get("kind").asText().equals(kind)) {
        return row;
      }
    }
    throw new AssertionError("no row for " + kind + " in " + report);
  }

  private Result run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        cli.run(
            List.of(args),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Result(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** What one command did: exit code, standard output and standard error. */
  private record Result(int code, String out, String err) {

    /** Standard output as the one JSON document it must be. */
    JsonNode json() {
      assertThat(code).as(err).isZero();
      try {
        return new ObjectMapper().readTree(out);
      } catch (java.io.IOException e) {
        throw new AssertionError("standard output is not one JSON document: " + out, e);
      }
    }
  }
}
