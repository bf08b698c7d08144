package io.asyncjobs.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.asyncjobs.client.ApiClient;
import io.asyncjobs.client.ApiException;
import io.asyncjobs.client.ApiResponse;
import io.asyncjobs.client.api.AdminApi;
import io.asyncjobs.client.api.JobsApi;
import io.asyncjobs.client.api.KindsApi;
import io.asyncjobs.client.model.BatchItem;
import io.asyncjobs.client.model.BatchResult;
import io.asyncjobs.client.model.BulkRequest;
import io.asyncjobs.client.model.BulkResult;
import io.asyncjobs.client.model.DeepsearchBatch;
import io.asyncjobs.client.model.DeepsearchBatchJob;
import io.asyncjobs.client.model.DeepsearchPayload;
import io.asyncjobs.client.model.Enqueued;
import io.asyncjobs.client.model.ForkBatch;
import io.asyncjobs.client.model.ForkBatchJob;
import io.asyncjobs.client.model.ForkPayload;
import io.asyncjobs.client.model.Job;
import io.asyncjobs.client.model.JobList;
import io.asyncjobs.client.model.NoopBatch;
import io.asyncjobs.client.model.NoopBatchJob;
import io.asyncjobs.client.model.NoopPayload;
import io.asyncjobs.client.model.NoopPayloadFail;
import io.asyncjobs.client.model.Pause;
import io.asyncjobs.client.model.PauseRequest;
import io.asyncjobs.client.model.Problem;
import io.asyncjobs.client.model.SeoBatch;
import io.asyncjobs.client.model.SeoBatchJob;
import io.asyncjobs.client.model.SeoMetaBatch;
import io.asyncjobs.client.model.SeoMetaBatchJob;
import io.asyncjobs.client.model.SeoMetaPayload;
import io.asyncjobs.client.model.SeoPayload;
import io.asyncjobs.client.model.ServiceCard;
import io.asyncjobs.client.model.Settings;
import io.asyncjobs.client.model.SettingsOverride;
import io.asyncjobs.client.model.ZipBatch;
import io.asyncjobs.client.model.ZipBatchJob;
import io.asyncjobs.client.model.ZipPayload;
import io.asyncjobs.kinds.noop.NoopService;
import io.asyncjobs.settings.SettingsStore;
import io.asyncjobs.storage.DataDirectory;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.Jobs;
import io.asyncjobs.testing.Tokens;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.io.File;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Drives every route through the Java client that openapi-generator makes from docs/openapi.json at
 * build time (pom.xml, execution {@code java-client}; the classes are in {@code
 * target/generated-test-sources/openapi}), as a user who generates a client would: typed payloads
 * per kind, typed answers, and each refusal an {@link ApiException} whose body is a {@link
 * Problem}. A route whose answer loses its schema turns a typed method into a void one and this
 * class stops compiling; a changed field, status or header fails a test here.
 */
@QuarkusTest
class GeneratedClientTest {

  static final String ALICE = Tokens.user("alice");
  static final String ADMIN = Tokens.admin("root");

  @Inject Database db;
  @Inject NoopService noop;
  @Inject SettingsStore settings;
  @Inject DataDirectory data;

  @TestHTTPResource("/")
  URI base;

  @BeforeEach
  void clean() {
    db.clearJobs();
    db.update("DELETE FROM service_pauses");
  }

  @AfterEach
  void settle() throws InterruptedException {
    // As JobsApiTest: interrupt what a test left running, undo the admin changes.
    db.update("UPDATE jobs SET cancel_requested = true WHERE status = 'running'");
    noop.runOnce();
    noop.awaitTasks(Duration.ofSeconds(10));
    settings.update("noop", io.asyncjobs.settings.SettingsOverride.NONE);
    db.update("DELETE FROM service_pauses");
  }

  /** A generated client pointed at the test application, sending {@code token} as bearer. */
  ApiClient client(String token) {
    ApiClient client = new ApiClient();
    // The document names no server; the base URI is the caller's to set (no trailing slash).
    client.updateBaseUri(base.toString().replaceAll("/$", ""));
    // The native library has no bearer support of its own: an interceptor adds the header.
    client.setRequestInterceptor(request -> request.header("Authorization", "Bearer " + token));
    return client;
  }

  /** The problem an {@link ApiException} carries, read with the client's own model. */
  static Problem problem(ApiClient client, ApiException e) throws Exception {
    return client.getObjectMapper().readValue(e.getResponseBody(), Problem.class);
  }

  /** Enqueue with an Idempotency-Key, follow the status to done, list, and read the events. */
  @Test
  void shouldEnqueueFollowTheStatusListAndStreamThroughTheClient() throws Exception {
    KindsApi kinds = new KindsApi(client(ALICE));
    JobsApi jobs = new JobsApi(client(ALICE));

    NoopPayload payload = new NoopPayload().artifactBytes(100).name("hello.txt");
    ApiResponse<Enqueued> first =
        kinds.enqueueNoopWithHttpInfo(payload, "key-1", -1, null, null, null);
    Enqueued enqueued = first.getData();
    assertThat(first.getStatusCode()).isEqualTo(202);
    // JAX-RS makes the Location absolute.
    assertThat(first.getHeaders().get("location"))
        .singleElement()
        .satisfies(location -> assertThat(location).endsWith(enqueued.getStatusUrl()));
    assertThat(enqueued.getStatus()).isEqualTo(Enqueued.StatusEnum.PENDING);
    assertThat(enqueued.getStatusUrl()).isEqualTo("/api/jobs/" + enqueued.getUid());
    // The same request with the same key again returns the first job, and says so.
    ApiResponse<Enqueued> again =
        kinds.enqueueNoopWithHttpInfo(payload, "key-1", -1, null, null, null);
    assertThat(again.getData().getUid()).isEqualTo(enqueued.getUid());
    assertThat(again.getHeaders().get("idempotent-replayed")).containsExactly("true");

    UUID uid = enqueued.getUid();
    Job pending = jobs.getJob(uid);
    assertThat(pending.getStatus()).isEqualTo(Job.StatusEnum.PENDING);
    assertThat(pending.getPriority()).isEqualTo(-1);
    assertThat(pending.getError()).isNull();
    Jobs.runAll(noop);
    Job done = jobs.getJob(uid);
    assertThat(done.getStatus()).isEqualTo(Job.StatusEnum.DONE);
    assertThat(done.getPreferredName()).isEqualTo("hello.txt");
    assertThat(done.getCompletedAt()).isNotNull();
    assertThat(done.getDownloadUrl()).startsWith("/api/jobs/" + uid + "/download?expires=");

    JobList listed = jobs.listJobs(null, "noop", 10, "done");
    assertThat(listed.getJobs()).extracting(Job::getUid).containsExactly(uid);
    assertThat(listed.getNext()).isNull();

    // The event stream of a finished job: one job event, then the end of the stream.
    String events = Files.readString(jobs.streamJobEvents(uid).toPath());
    assertThat(events).contains("event:job").contains("\"status\":\"done\"");
  }

  /** Downloads: the whole file, one range (206), a current copy (304), a range outside (416). */
  @Test
  void shouldDownloadWholeRangedAndConditionallyThroughTheClient() throws Exception {
    ApiClient alice = client(ALICE);
    JobsApi jobs = new JobsApi(alice);
    UUID uid =
        new KindsApi(alice)
            .enqueueNoop(
                new NoopPayload().artifactBytes(100).name("hello.txt"),
                null,
                null,
                null,
                null,
                null)
            .getUid();
    Jobs.runAll(noop);

    ApiResponse<File> whole = jobs.downloadJobFileWithHttpInfo(uid, null, null, null, null, null);
    assertThat(whole.getStatusCode()).isEqualTo(200);
    assertThat(Files.size(whole.getData().toPath())).isEqualTo(100);
    String etag = whole.getHeaders().get("etag").get(0);

    ApiResponse<File> part =
        jobs.downloadJobFileWithHttpInfo(uid, null, null, null, null, "bytes=10-19");
    assertThat(part.getStatusCode()).isEqualTo(206);
    assertThat(Files.size(part.getData().toPath())).isEqualTo(10);
    assertThat(part.getHeaders().get("content-range")).containsExactly("bytes 10-19/100");

    // The signed link's query parameters, typed as the document says (expires an int64).
    String link = jobs.getJob(uid).getDownloadUrl();
    Map<String, String> query = new java.util.HashMap<>();
    for (String pair : URI.create(link).getRawQuery().split("&")) {
      String[] kv = pair.split("=", 2);
      query.put(kv[0], java.net.URLDecoder.decode(kv[1], java.nio.charset.StandardCharsets.UTF_8));
    }
    File signed =
        jobs.downloadJobFile(
            uid, Long.parseLong(query.get("expires")), query.get("sig"), null, null, null);
    assertThat(Files.size(signed.toPath())).isEqualTo(100);

    // A 304 is no 2xx: the generated client throws, with the ETag in the headers.
    ApiException current =
        catchThrowableOfType(
            ApiException.class, () -> jobs.downloadJobFile(uid, null, null, etag, null, null));
    assertThat(current.getCode()).isEqualTo(304);

    ApiException outside =
        catchThrowableOfType(
            ApiException.class,
            () -> jobs.downloadJobFile(uid, null, null, null, null, "bytes=500-600"));
    assertThat(outside.getCode()).isEqualTo(416);
    assertThat(problem(alice, outside).getType())
        .isEqualTo("urn:async-jobs:problem:range-not-satisfiable");
    assertThat(outside.getResponseHeaders().firstValue("content-range")).hasValue("bytes */100");
  }

  /** Batches: typed payloads of two kinds, each job's result in order, a replayed key. */
  @Test
  void shouldEnqueueBatchesOfTypedPayloadsThroughTheClient() throws Exception {
    KindsApi kinds = new KindsApi(client(ALICE));
    NoopBatch batch =
        new NoopBatch()
            .jobs(
                List.of(
                    new NoopBatchJob().payload(new NoopPayload().sleepMs(0)).idempotencyKey("b-1"),
                    new NoopBatchJob()
                        .payload(new NoopPayload().fail(new NoopPayloadFail("disk full")))
                        .priority(-2)
                        .delaySeconds(600)));
    ApiResponse<BatchResult> answer = kinds.enqueueNoopBatchWithHttpInfo(batch);
    assertThat(answer.getStatusCode()).isEqualTo(202);
    List<BatchItem> items = answer.getData().getJobs();
    assertThat(items).hasSize(2);
    assertThat(items).extracting(BatchItem::getReplayed).containsExactly(false, false);
    assertThat(items).extracting(BatchItem::getStatus).containsOnly(BatchItem.StatusEnum.PENDING);
    Job delayed = new JobsApi(client(ALICE)).getJob(items.get(1).getUid());
    assertThat(delayed.getRunAfter()).isNotNull();
    assertThat(delayed.getPriority()).isEqualTo(-2);

    BatchResult replay =
        kinds.enqueueNoopBatch(new NoopBatch().jobs(List.of(batch.getJobs().get(0))));
    assertThat(replay.getJobs().get(0).getUid()).isEqualTo(items.get(0).getUid());
    assertThat(replay.getJobs().get(0).getReplayed()).isTrue();

    // A real kind: a zip of a file in the caller's folder, single and batched.
    Path folder = Files.createDirectories(data.root().resolve("files/user/alice/client"));
    Files.writeString(folder.resolve("notes.md"), "# notes");
    Enqueued zip =
        kinds.enqueueZip(
            new ZipPayload().paths(List.of("client/notes.md")).name("notes.zip").level(9),
            null,
            null,
            null,
            null,
            null);
    assertThat(zip.getKind()).isEqualTo("zip");
    BatchResult zips =
        kinds.enqueueZipBatch(
            new ZipBatch()
                .jobs(
                    List.of(new ZipBatchJob().payload(new ZipPayload().paths(List.of("client"))))));
    assertThat(zips.getJobs()).singleElement().extracting(BatchItem::getKind).isEqualTo("zip");
  }

  /** Every other kind, single and batched, with its own typed payload; a body too large. */
  @Test
  void shouldEnqueueEveryKindWithItsTypedPayloadThroughTheClient() throws Exception {
    ApiClient alice = client(ALICE);
    KindsApi kinds = new KindsApi(alice);
    Path site = Files.createDirectories(data.root().resolve("files/user/alice/client-site"));
    Files.writeString(site.resolve("index.html"), "<html><head><title>Home</title></head></html>");

    List<Enqueued> single =
        List.of(
            kinds.enqueueFork(
                new ForkPayload().source("client-site").target("client-copy"),
                null,
                null,
                null,
                null,
                null),
            kinds.enqueueSeo(
                new SeoPayload().site("client-site").baseUrl(URI.create("https://example.com/")),
                null,
                null,
                null,
                null,
                null),
            kinds.enqueueSeoMeta(
                new SeoMetaPayload().site("client-site").writeCopies(true),
                null,
                null,
                null,
                null,
                null),
            kinds.enqueueDeepsearch(
                new DeepsearchPayload().root("client-site").query("home").limit(5),
                null,
                null,
                null,
                null,
                null));
    assertThat(single)
        .extracting(Enqueued::getKind)
        .containsExactly("fork", "seo", "seo_meta", "deepsearch");

    List<BatchResult> batches =
        List.of(
            kinds.enqueueForkBatch(
                new ForkBatch()
                    .jobs(
                        List.of(
                            new ForkBatchJob()
                                .payload(
                                    new ForkPayload().source("client-site").target("client-2"))))),
            kinds.enqueueSeoBatch(
                new SeoBatch()
                    .jobs(
                        List.of(new SeoBatchJob().payload(new SeoPayload().site("client-site"))))),
            kinds.enqueueSeoMetaBatch(
                new SeoMetaBatch()
                    .jobs(
                        List.of(
                            new SeoMetaBatchJob()
                                .payload(new SeoMetaPayload().site("client-site"))))),
            kinds.enqueueDeepsearchBatch(
                new DeepsearchBatch()
                    .jobs(
                        List.of(
                            new DeepsearchBatchJob()
                                .payload(
                                    new DeepsearchPayload().root("client-site").query("home"))))));
    assertThat(batches)
        .extracting(batch -> batch.getJobs().get(0).getKind())
        .containsExactly("fork", "seo", "seo_meta", "deepsearch");

    // Over jobs.api.max-body-bytes (1 MiB): a 413 problem, and nothing enqueued.
    long before = db.query("SELECT uid FROM jobs").size();
    ApiException tooLarge =
        catchThrowableOfType(
            ApiException.class,
            () ->
                kinds.enqueueZip(
                    new ZipPayload().paths(java.util.Collections.nCopies(1000, "x".repeat(1100))),
                    null,
                    null,
                    null,
                    null,
                    null));
    assertThat(tooLarge.getCode()).isEqualTo(413);
    assertThat(problem(alice, tooLarge).getType())
        .isEqualTo("urn:async-jobs:problem:body-too-large");
    assertThat(db.query("SELECT uid FROM jobs")).hasSize((int) before);
  }

  /** Cancel: a pending job fails at once (200), a running one is asked to stop (202). */
  @Test
  void shouldCancelPendingAndRunningJobsThroughTheClient() throws Exception {
    KindsApi kinds = new KindsApi(client(ALICE));
    JobsApi jobs = new JobsApi(client(ALICE));

    UUID running =
        kinds.enqueueNoop(new NoopPayload().sleepMs(60000), null, null, null, null, null).getUid();
    noop.runOnce();
    UUID pending = kinds.enqueueNoop(new NoopPayload(), null, null, null, null, null).getUid();

    Job cancelled = jobs.cancelJob(pending);
    assertThat(cancelled.getStatus()).isEqualTo(Job.StatusEnum.FAILED);
    assertThat(cancelled.getError()).isEqualTo("cancelled on request");

    ApiResponse<Job> asked = jobs.cancelJobWithHttpInfo(running);
    assertThat(asked.getStatusCode()).isEqualTo(202);
    assertThat(asked.getData().getStatus()).isEqualTo(Job.StatusEnum.RUNNING);
    assertThat(asked.getData().getCancelRequested()).isTrue();
  }

  /** Problems: each refusal is an ApiException whose body parses as the document's Problem. */
  @Test
  void shouldSurfaceProblemsAsApiExceptionsWithAProblemBody() throws Exception {
    ApiClient alice = client(ALICE);
    KindsApi kinds = new KindsApi(alice);

    ApiException unknown =
        catchThrowableOfType(
            ApiException.class, () -> new JobsApi(alice).getJob(UUID.randomUUID()));
    assertThat(unknown.getCode()).isEqualTo(404);
    assertThat(problem(alice, unknown).getType()).isEqualTo("urn:async-jobs:problem:not-found");

    ApiException refused =
        catchThrowableOfType(
            ApiException.class,
            () -> kinds.enqueueNoop(new NoopPayload().sleepMs(-1), null, null, null, null, null));
    assertThat(refused.getCode()).isEqualTo(400);
    assertThat(problem(alice, refused).getDetail()).contains("sleep_ms");

    ApiException tooHigh =
        catchThrowableOfType(
            ApiException.class,
            () -> kinds.enqueueNoop(new NoopPayload(), null, 5, null, null, null));
    assertThat(tooHigh.getCode()).isEqualTo(403);

    kinds.enqueueNoop(new NoopPayload().sleepMs(1), "key-2", null, null, null, null);
    ApiException reused =
        catchThrowableOfType(
            ApiException.class,
            () -> kinds.enqueueNoop(new NoopPayload().sleepMs(2), "key-2", null, null, null, null));
    assertThat(reused.getCode()).isEqualTo(422);

    UUID done = kinds.enqueueNoop(new NoopPayload(), null, null, null, null, null).getUid();
    Jobs.runAll(noop);
    ApiException finished =
        catchThrowableOfType(ApiException.class, () -> new JobsApi(alice).cancelJob(done));
    assertThat(finished.getCode()).isEqualTo(409);

    ApiException unauthenticated =
        catchThrowableOfType(
            ApiException.class, () -> new AdminApi(client("not-a-token")).listServices());
    assertThat(unauthenticated.getCode()).isEqualTo(401);
    ApiException forbidden =
        catchThrowableOfType(ApiException.class, () -> new AdminApi(alice).listServices());
    assertThat(forbidden.getCode()).isEqualTo(403);
  }

  /**
   * Admin: cards, settings, pause (with and without a reason) and resume, retries, bulk actions.
   */
  @Test
  void shouldManageServicesAndJobsThroughTheClient() throws Exception {
    ApiClient root = client(ADMIN);
    AdminApi admin = new AdminApi(root);
    KindsApi kinds = new KindsApi(client(ALICE));

    List<ServiceCard> cards = admin.listServices();
    assertThat(cards).extracting(ServiceCard::getService).contains("noop", "zip");

    Settings changed =
        admin.updateServiceSettings(
            "noop",
            new SettingsOverride()
                .maxConcurrent(2)
                .claimOrder(SettingsOverride.ClaimOrderEnum.FAIR));
    assertThat(changed.getEffective().getMaxConcurrent()).isEqualTo(2);
    Settings read = admin.getServiceSettings("noop");
    assertThat(read.getOverrides().getMaxConcurrent()).isEqualTo(2);
    assertThat(read.getOverrides().getRetentionSeconds()).isNull();
    assertThat(read.getEffective().getClaimOrder())
        .isEqualTo(io.asyncjobs.client.model.SettingsValues.ClaimOrderEnum.FAIR);

    Pause paused = admin.pauseService("noop", new PauseRequest().reason("maintenance"));
    assertThat(paused.getPaused()).isTrue();
    assertThat(paused.getReason()).isEqualTo("maintenance");
    assertThat(admin.resumeService("noop").getPaused()).isFalse();
    // Without a reason the client sends the JSON null as the body.
    Pause bare = admin.pauseService("noop", null);
    assertThat(bare.getPaused()).isTrue();
    assertThat(bare.getReason()).isNull();
    admin.resumeService("noop");
    ApiException unknown =
        catchThrowableOfType(ApiException.class, () -> admin.pauseService("nosuchservice", null));
    assertThat(unknown.getCode()).isEqualTo(404);

    UUID failing =
        kinds
            .enqueueNoop(
                new NoopPayload().fail(new NoopPayloadFail("disk full")),
                null,
                null,
                null,
                null,
                null)
            .getUid();
    Jobs.runAll(noop);
    Job retried = admin.retryJob(failing);
    assertThat(retried.getStatus()).isEqualTo(Job.StatusEnum.PENDING);
    Jobs.runAll(noop);

    BulkResult counted =
        admin.retryJobs(
            new BulkRequest().kind("noop").status(BulkRequest.StatusEnum.FAILED).dryRun(true));
    assertThat(counted.getMatched()).isEqualTo(1);
    assertThat(counted.getAffected()).isZero();
    BulkResult again = admin.retryJobs(new BulkRequest().kind("noop"));
    assertThat(again.getAffected()).isEqualTo(1);

    BulkResult cancelled =
        admin.cancelJobs(new BulkRequest().kind("noop").status(BulkRequest.StatusEnum.PENDING));
    assertThat(cancelled.getAffected()).isEqualTo(1);
    JobList all = admin.listAllJobs(null, "noop", 50, "alice", "user", null);
    assertThat(all.getJobs())
        .singleElement()
        .satisfies(
            job -> {
              assertThat(job.getUid()).isEqualTo(failing);
              assertThat(job.getStatus()).isEqualTo(Job.StatusEnum.FAILED);
              assertThat(job.getError()).isEqualTo("cancelled on request");
            });
  }
}
