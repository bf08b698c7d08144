package io.asyncjobs.kinds.zip;

import static io.asyncjobs.testing.Jobs.enqueue;
import static io.asyncjobs.testing.Jobs.runAll;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import io.asyncjobs.files.Trees;
import io.asyncjobs.problem.Problem;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobQueue;
import io.asyncjobs.storage.DataDirectory;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.DebianPackages;
import io.asyncjobs.testing.SmallVolume;
import io.asyncjobs.testing.Tokens;
import io.quarkus.arc.ClientProxy;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@QuarkusTest
class ZipServiceTest {

  static final String ZOE = Tokens.user("zoe");

  @Inject ZipService zip;
  @Inject DataDirectory data;
  @Inject Database db;
  @Inject JobQueue queue;

  Path home;

  @BeforeEach
  void tree() throws IOException {
    db.clearJobs();
    home = data.root().resolve("files/user/zoe");
    Trees.delete(home);
    Files.createDirectories(home.resolve("docs/sub"));
    Files.createDirectories(home.resolve("docs/empty"));
    Files.createDirectories(home.resolve("pics"));
    Files.writeString(home.resolve("docs/a.txt"), "hello zip\n".repeat(2000));
    Files.writeString(home.resolve("docs/sub/b.md"), "# title\n\nsome text\n");
    byte[] noise = new byte[50_000];
    new Random(7).nextBytes(noise);
    Files.write(home.resolve("pics/p.jpg"), noise);
    Files.writeString(home.resolve("note.txt"), "note");
  }

  @AfterEach
  void unhook() {
    ClientProxy.unwrap(zip).whenHalfWritten(null);
    ClientProxy.unwrap(zip).measureSpaceWith(null);
  }

  Path download(String token, String uid) throws IOException {
    Response response = given().auth().oauth2(token).get("/api/jobs/" + uid + "/download");
    response.then().statusCode(200).header("Content-Type", "application/zip");
    Path file = Files.createTempFile("zip-test", ".zip");
    Files.write(file, response.asByteArray());
    return file;
  }

  static List<String> names(Path archive) throws IOException {
    try (ZipFile zipFile = new ZipFile(archive.toFile())) {
      return Collections.list(zipFile.entries()).stream().map(ZipEntry::getName).toList();
    }
  }

  static void unzipTest(Path archive) throws Exception {
    Path unzip = Path.of("/usr/bin/unzip");
    DebianPackages.require("The zip checks", Map.of(unzip, "unzip"));
    Process p =
        new ProcessBuilder(unzip.toString(), "-t", archive.toString())
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor()).as(out).isZero();
    assertThat(out).contains("No errors detected");
  }

  @Test
  void shouldArchiveFilesAndFoldersKeepingEmptyOnesAndStoringCompressedTypes() throws Exception {
    String uid =
        enqueue(
            ZOE,
            "zip",
            "{\"paths\": [\"docs\", \"pics/p.jpg\", \"note.txt\"], \"name\": \"my stuff\"}");
    runAll(zip);

    Response status = given().auth().oauth2(ZOE).get("/api/jobs/" + uid);
    status
        .then()
        .body("status", equalTo("done"))
        .body("preferred_name", equalTo("my stuff.zip"))
        .body("item_count", equalTo(4))
        .body("result.files", equalTo(4))
        .body("progress.fraction", equalTo(1.0f));
    long inputBytes =
        Files.size(home.resolve("docs/a.txt"))
            + Files.size(home.resolve("docs/sub/b.md"))
            + Files.size(home.resolve("pics/p.jpg"))
            + Files.size(home.resolve("note.txt"));
    assertThat(status.<Number>path("bytes_in").longValue()).isEqualTo(inputBytes);

    Path archive = download(ZOE, uid);
    unzipTest(archive);
    assertThat(status.<Number>path("bytes_out").longValue()).isEqualTo(Files.size(archive));
    assertThat(names(archive))
        .contains(
            "docs/",
            "docs/empty/",
            "docs/sub/",
            "docs/a.txt",
            "docs/sub/b.md",
            "pics/p.jpg",
            "note.txt");
    try (ZipFile zipFile = new ZipFile(archive.toFile())) {
      ZipEntry text = zipFile.getEntry("docs/a.txt");
      assertThat(text.getMethod()).isEqualTo(ZipEntry.DEFLATED);
      assertThat(text.getCompressedSize()).isLessThan(text.getSize() / 10);
      assertThat(zipFile.getEntry("pics/p.jpg").getMethod()).isEqualTo(ZipEntry.STORED);
      assertThat(new String(zipFile.getInputStream(text).readAllBytes(), StandardCharsets.UTF_8))
          .isEqualTo(Files.readString(home.resolve("docs/a.txt")));
      assertThat(zipFile.getInputStream(zipFile.getEntry("pics/p.jpg")).readAllBytes())
          .isEqualTo(Files.readAllBytes(home.resolve("pics/p.jpg")));
    }
    // Nothing but the archive is left in the artifact folder.
    try (var left = Files.list(data.root().resolve("artifacts/zip/" + uid))) {
      assertThat(left.map(p -> p.getFileName().toString()).toList()).containsExactly("archive.zip");
    }
  }

  @Test
  void shouldLetTwoAttemptsOfOneJobWriteAtOnceAndBothLeaveAValidArchive() throws Exception {
    String uid = enqueue(ZOE, "zip", "{\"paths\": [\"docs\", \"pics\", \"note.txt\"]}");
    Job job = queue.getJob(UUID.fromString(uid)).orElseThrow();
    Path folder = data.root().resolve("artifacts/zip/" + uid);
    // The first attempt (an old owner that lost the job but is still writing) stops half way.
    CountDownLatch halfWay = new CountDownLatch(1);
    CountDownLatch goOn = new CountDownLatch(1);
    AtomicBoolean first = new AtomicBoolean(true);
    ZipService service = ClientProxy.unwrap(zip);
    service.whenHalfWritten(
        () -> {
          if (first.getAndSet(false)) {
            halfWay.countDown();
            goOn.await(30, TimeUnit.SECONDS);
          }
        });
    CompletableFuture<Map<String, Object>> oldOwner =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return service.process(job);
              } catch (Exception e) {
                throw new java.util.concurrent.CompletionException(e);
              }
            });
    assertThat(halfWay.await(30, TimeUnit.SECONDS)).isTrue();
    List<Path> firstPartial;
    try (var partials = Files.newDirectoryStream(folder, "*.partial")) {
      firstPartial = new ArrayList<>();
      partials.forEach(firstPartial::add);
    }
    assertThat(firstPartial).hasSize(1);
    long halfSize = Files.size(firstPartial.get(0));

    // Meanwhile the retry runs through to the end, while the first attempt's files are there.
    runAll(zip);
    given().auth().oauth2(ZOE).get("/api/jobs/" + uid).then().body("status", equalTo("done"));
    Path retried = download(ZOE, uid);
    unzipTest(retried);
    assertThat(firstPartial.get(0)).as("the first attempt's partial").exists().hasSize(halfSize);

    // Then the old owner finishes: it neither failed nor spoiled what is served.
    goOn.countDown();
    Throwable oldOwnerFailure = null;
    try {
      oldOwner.get(30, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      oldOwnerFailure = e.getCause();
    }
    Path served = download(ZOE, uid);
    unzipTest(served);
    assertThat(names(served)).contains("docs/a.txt", "docs/sub/b.md", "pics/p.jpg", "note.txt");
    try (ZipFile zipFile = new ZipFile(served.toFile())) {
      assertThat(zipFile.getInputStream(zipFile.getEntry("pics/p.jpg")).readAllBytes())
          .isEqualTo(Files.readAllBytes(home.resolve("pics/p.jpg")));
    }
    assertThat(oldOwnerFailure).as("the first attempt's failure").isNull();
    try (var left = Files.list(folder)) {
      assertThat(left.map(p -> p.getFileName().toString()).toList()).containsExactly("archive.zip");
    }
  }

  @Test
  void shouldArchiveTheWholeFolderNamedAsDot() throws Exception {
    String uid = enqueue(ZOE, "zip", "{\"paths\": [\".\"]}");
    runAll(zip);
    Path archive = download(ZOE, uid);
    unzipTest(archive);
    assertThat(names(archive))
        .contains("note.txt", "docs/a.txt", "docs/empty/")
        .doesNotContain("/");
  }

  @Test
  void shouldRefuseBadPayloadsAndEnqueueNothing() throws Exception {
    Files.createSymbolicLink(home.resolve("escape"), data.root().resolve("files"));
    List<String> bad = new ArrayList<>();
    bad.add("{}");
    bad.add("{\"paths\": []}");
    bad.add("{\"paths\": \"docs\"}");
    bad.add("{\"paths\": [7]}");
    bad.add("{\"paths\": [\"docs\"], \"colour\": \"red\"}");
    bad.add("{\"paths\": [\"docs\"], \"level\": 10}");
    bad.add("{\"paths\": [\"docs\"], \"name\": \"a/b.zip\"}");
    bad.add("{\"paths\": [\"/etc\"]}");
    bad.add("{\"paths\": [\"../bob\"]}");
    bad.add("{\"paths\": [\"docs/../../bob\"]}");
    bad.add("{\"paths\": [\"missing\"]}");
    bad.add("{\"paths\": [\"escape/bob\"]}");
    bad.add("{\"paths\": [\"docs\"], \"scope\": \"files\"}");
    for (String body : bad) {
      given()
          .auth()
          .oauth2(ZOE)
          .contentType(ContentType.JSON)
          .body(body)
          .post("/api/zip")
          .then()
          .statusCode(400)
          .contentType(Problem.MEDIA_TYPE);
    }
    assertThat(db.query("SELECT uid FROM jobs")).isEmpty();
  }

  @Test
  void shouldNotFollowALinkOutOfTheTreeThatAppearedAfterTheEnqueue() throws Exception {
    Path outside = Files.createDirectories(data.root().resolve("files/user/yan"));
    Files.writeString(outside.resolve("secret.txt"), "not zoe's");
    String uid = enqueue(ZOE, "zip", "{\"paths\": [\"docs\"]}");
    Files.createSymbolicLink(home.resolve("docs/secret.txt"), outside.resolve("secret.txt"));
    Files.createSymbolicLink(home.resolve("docs/inside.txt"), home.resolve("note.txt"));

    runAll(zip);

    given()
        .auth()
        .oauth2(ZOE)
        .get("/api/jobs/" + uid)
        .then()
        .body("result.skipped_links", equalTo(1));
    Path archive = download(ZOE, uid);
    unzipTest(archive);
    assertThat(names(archive)).doesNotContain("docs/secret.txt").contains("docs/inside.txt");
  }

  @Test
  void shouldNeverArchiveAFileSwappedForALinkAndLeaveNothingOpen() throws Exception {
    Path outside = Files.createDirectories(data.root().resolve("files/user/yan"));
    Files.writeString(outside.resolve("secret.txt"), "not zoe's");
    String uid = enqueue(ZOE, "zip", "{\"paths\": [\"docs\"]}");
    // The job lists docs/a.txt as a file; soon after, it leads to yan's file. (The race between
    // the job's read and the swap is real: FileScopeTest pins the refusal down exactly.)
    Path listed = home.resolve("docs/a.txt");
    zip.runOnce();
    Files.delete(listed);
    Files.createSymbolicLink(listed, outside.resolve("secret.txt"));
    assertThat(zip.awaitTasks(Duration.ofSeconds(30))).isTrue();
    zip.runOnce();

    // Whichever came first, the read or the swap, yan's file never lands in zoe's archive: the
    // job either archived without it, or refused the link and failed leaving nothing behind.
    String status = given().auth().oauth2(ZOE).get("/api/jobs/" + uid).path("status");
    Path folder = data.root().resolve("artifacts/zip/" + uid);
    if (status.equals("done")) {
      try (ZipFile zipFile = new ZipFile(folder.resolve("archive.zip").toFile())) {
        // The listing may have seen the file, the link (skipped), or neither (mid-swap): in no
        // case does yan's file reach the archive.
        for (ZipEntry entry : Collections.list(zipFile.entries())) {
          assertThat(zipFile.getInputStream(entry).readAllBytes())
              .asString(StandardCharsets.UTF_8)
              .doesNotContain("not zoe's");
        }
      }
    } else {
      assertThat(status).isEqualTo("failed");
      if (Files.exists(folder)) {
        try (var left = Files.list(folder)) {
          assertThat(left.toList()).isEmpty();
        }
      }
    }
    // No handle of the job's spill files stays open (their disk space would stay in use).
    try (var fds = Files.list(Path.of("/proc/self/fd"))) {
      List<String> open = new ArrayList<>();
      for (Path fd : fds.toList()) {
        try {
          open.add(Files.readSymbolicLink(fd).toString());
        } catch (IOException gone) {
          // closed while listing
        }
      }
      assertThat(open).noneMatch(target -> target.contains("artifacts/zip/" + uid));
    }
  }

  @Test
  void shouldFailWhenANamedPathNowLeadsOut() throws Exception {
    String uid = enqueue(ZOE, "zip", "{\"paths\": [\"docs\"]}");
    Trees.delete(home.resolve("docs"));
    Files.createDirectories(data.root().resolve("files/user/yan"));
    Files.createSymbolicLink(home.resolve("docs"), data.root().resolve("files/user/yan"));

    runAll(zip);

    given()
        .auth()
        .oauth2(ZOE)
        .get("/api/jobs/" + uid)
        .then()
        .body("status", equalTo("failed"))
        .body("error", org.hamcrest.Matchers.containsString("outside your folder"));
  }

  @Test
  void shouldLetAnAdminArchiveAnyOwnersFilesAndRemoveTheArchiveOnExpiry() throws Exception {
    String admin = Tokens.admin("root");
    String uid = enqueue(admin, "zip", "{\"paths\": [\"user/zoe/docs/sub\"]}");
    runAll(zip);
    Path archive = download(admin, uid);
    unzipTest(archive);
    assertThat(names(archive)).contains("user/zoe/docs/sub/b.md");
    Path folder = data.root().resolve("artifacts/zip/" + uid);
    assertThat(folder).isDirectory();

    db.update(
        "UPDATE jobs SET expires_at = now() - interval '1 hour' WHERE uid = ?",
        UUID.fromString(uid));
    zip.runOnce();

    assertThat(folder).doesNotExist();
    assertThat(db.query("SELECT uid FROM jobs WHERE uid = ?", UUID.fromString(uid))).isEmpty();
  }

  @Test
  void shouldFailAtOnceInWordsWhenTheStoredEntriesAloneCannotFit() throws Exception {
    // 40 MiB that take no room here (a sparse file); a type that is stored, not deflated, so the
    // archive needs at least that much.
    Files.createDirectories(home.resolve("video"));
    try (java.io.RandomAccessFile big =
        new java.io.RandomAccessFile(home.resolve("video/big.mp4").toFile(), "rw")) {
      big.setLength(40L * 1024 * 1024 - 64 * 1024);
    }
    ClientProxy.unwrap(zip).measureSpaceWith(folder -> 23L * 1024 * 1024 + 5);
    String uid = enqueue(ZOE, "zip", "{\"paths\": [\"video\"]}");
    runAll(zip);

    Job job = queue.getJob(UUID.fromString(uid)).orElseThrow();
    assertThat(job.status).isEqualTo(io.asyncjobs.queue.JobStatus.FAILED);
    assertThat(job.error)
        .isEqualTo("not enough space on the data volume: needs at least 40 MiB, 23 MiB free");
    // Failed before writing: not even the artifact folder was made.
    assertThat(data.root().resolve("artifacts/zip/" + uid)).doesNotExist();
  }

  @Test
  void shouldSayInWordsWhenTheVolumeFillsUpWhileTheArchiveIsWritten() throws Exception {
    // 3 MiB of noise under a type that is deflated: the estimate (stored entries only) lets it
    // start, and the 1 MiB volume fills up under the workers' spill files.
    Random random = new Random(11);
    for (int i = 0; i < 3; i++) {
      byte[] noise = new byte[1024 * 1024];
      random.nextBytes(noise);
      Files.createDirectories(home.resolve("noise"));
      Files.write(home.resolve("noise/n" + i + ".bin"), noise);
    }
    String uid = enqueue(ZOE, "zip", "{\"paths\": [\"noise\"]}");
    Path folder = Files.createDirectories(data.root().resolve("artifacts/zip/" + uid));
    try (SmallVolume volume = SmallVolume.mount(folder, "1m")) {
      if (!volume.mounted()) {
        ClientProxy.unwrap(zip)
            .whenHalfWritten(
                () -> {
                  throw new java.io.UncheckedIOException(
                      new IOException("No space left on device"));
                });
      }
      runAll(zip);

      Job job = queue.getJob(UUID.fromString(uid)).orElseThrow();
      assertThat(job.status).isEqualTo(io.asyncjobs.queue.JobStatus.FAILED);
      assertThat(job.error)
          .startsWith(
              "not enough space on the data volume: it filled up while the job was writing (")
          .endsWith(" MiB were free when it started)")
          .doesNotContain("Exception");
      try (var left = Files.list(folder)) {
        assertThat(left).as("the attempt's partial archive and spill files").isEmpty();
      }
    }
  }

  @Test
  void shouldStoreOnlyAlreadyCompressedTypes() {
    assertThat(ZipService.storedType("a/b/photo.JPG")).isTrue();
    assertThat(ZipService.storedType("backup.tar.gz")).isTrue();
    assertThat(ZipService.storedType("notes.txt")).isFalse();
    assertThat(ZipService.storedType("README")).isFalse();
    // A backslash is a folder separator to Windows extractors: never in an entry name.
    assertThat(ZipService.entryName("docs/..\\..\\evil.txt")).isEqualTo("docs/.._.._evil.txt");
  }
}
