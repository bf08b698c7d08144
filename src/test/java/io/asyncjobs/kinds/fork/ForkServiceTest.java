package io.asyncjobs.kinds.fork;

import static io.asyncjobs.testing.Jobs.runUntilIdle;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.files.Trees;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobQueue;
import io.asyncjobs.queue.JobStatus;
import io.asyncjobs.storage.DataDirectory;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.SmallVolume;
import io.asyncjobs.testing.TestClock;
import io.asyncjobs.testing.Tokens;
import io.quarkus.arc.ClientProxy;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Fork end to end: enqueue over HTTP, run the engine, look at the folders a caller sees. */
@QuarkusTest
class ForkServiceTest {

  @Inject ForkService service;
  @Inject JobQueue queue;
  @Inject DataDirectory data;
  @Inject TestClock clock;
  @Inject Database db;

  String owner;
  String token;
  Path base;
  Path outside;

  @BeforeEach
  void freshOwner() throws Exception {
    owner = "fk-" + UUID.randomUUID().toString().substring(0, 8);
    token = Tokens.user(owner);
    base = Files.createDirectories(data.root().resolve("files/user").resolve(owner));
    outside = Files.createDirectories(data.root().resolve("outside-" + owner));
    Files.writeString(outside.resolve("secret.txt"), "not yours");
  }

  @AfterEach
  void settle() throws Exception {
    ClientProxy.unwrap(service).watchSteps(null);
    ClientProxy.unwrap(service).measureSpaceWith(null);
    clock.reset();
    runUntilIdle(service, db);
    Trees.delete(outside);
  }

  Path write(String name, String content) throws Exception {
    Path file = base.resolve(name);
    Files.createDirectories(file.getParent());
    return Files.writeString(file, content);
  }

  UUID enqueue(String source, String target) {
    String uid =
        given()
            .auth()
            .oauth2(token)
            .contentType(ContentType.JSON)
            .body(Map.of("source", source, "target", target))
            .post("/api/fork")
            .then()
            .statusCode(202)
            .extract()
            .path("uid");
    return UUID.fromString(uid);
  }

  Job job(UUID uid) {
    return queue.getJob(uid).orElseThrow();
  }

  Job done(UUID uid) {
    Job job = job(uid);
    assertThat(job.status).as("job %s: %s", uid, job.error).isEqualTo(JobStatus.DONE);
    return job;
  }

  /** Runs {@code change} once, when the next fork reaches {@code step}. */
  void atStep(ForkService.Step step, ForkService.StepWatcher change) {
    ClientProxy.unwrap(service)
        .watchSteps(
            reached -> {
              if (reached == step) {
                ClientProxy.unwrap(service).watchSteps(null);
                change.before(reached);
              }
            });
  }

  /** Replaces the folder {@code name} by a link to the folder outside the caller's. */
  ForkService.StepWatcher swapForLinkOut(String name) {
    return step -> {
      Files.move(base.resolve(name), base.resolve(name + "-moved"));
      Files.createSymbolicLink(base.resolve(name), outside);
    };
  }

  List<String> outsideNames() throws Exception {
    try (Stream<Path> names = Files.walk(outside)) {
      return names.map(p -> outside.relativize(p).toString()).filter(n -> !n.isEmpty()).toList();
    }
  }

  static void mkfifo(Path path) throws java.io.IOException {
    try {
      assertThat(new ProcessBuilder("mkfifo", path.toString()).start().waitFor()).isZero();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException("mkfifo was interrupted");
    }
  }

  static FileTime time(String instant) {
    return FileTime.from(Instant.parse(instant));
  }

  static void chmod(Path path, String permissions) throws Exception {
    Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(permissions));
  }

  static String permissions(Path path) throws Exception {
    return PosixFilePermissions.toString(
        Files.getPosixFilePermissions(path, LinkOption.NOFOLLOW_LINKS));
  }

  static FileTime modified(Path path) throws Exception {
    return Files.getLastModifiedTime(path, LinkOption.NOFOLLOW_LINKS);
  }

  /**
   * Temporary copies left anywhere a fork could put one: the service's own folder, and (checked
   * too, though nothing should be there) hidden folders next to {@code folder}.
   */
  List<String> leftovers(Path folder) throws Exception {
    List<String> found = new java.util.ArrayList<>();
    Path own = data.root().resolve("tmp/fork");
    if (Files.isDirectory(own)) {
      try (Stream<Path> names = Files.list(own)) {
        names.map(p -> "tmp/fork/" + p.getFileName()).forEach(found::add);
      }
    }
    try (Stream<Path> names = Files.list(folder)) {
      names
          .map(p -> p.getFileName().toString())
          .filter(n -> n.startsWith(".fork-"))
          .forEach(found::add);
    }
    return found;
  }

  @Test
  void shouldCopyTheTreeKeepingContentTimesPermissionsEmptyFoldersAndInnerLinks() throws Exception {
    Path site = base.resolve("site");
    write("site/index.html", "<h1>home</h1>");
    write("site/bin/run.sh", "#!/bin/sh\necho hi\n");
    write("site/private/notes.txt", "mine");
    write("site/readonly/frozen.txt", "ice");
    byte[] big = new byte[20 << 20]; // larger than one copy chunk
    new Random(7).nextBytes(big);
    Files.write(site.resolve("bin/big.dat"), big);
    Files.createDirectories(site.resolve("empty/deeper"));
    Files.createSymbolicLink(site.resolve("latest.html"), Path.of("index.html"));
    Files.createSymbolicLink(site.resolve("leak.txt"), outside.resolve("secret.txt"));

    chmod(site.resolve("index.html"), "rw-r--r--");
    chmod(site.resolve("bin/run.sh"), "rwxr-x---");
    chmod(site.resolve("private/notes.txt"), "rw-------");
    chmod(site.resolve("private"), "rwx------");
    chmod(site.resolve("readonly/frozen.txt"), "r--r--r--");
    chmod(site.resolve("readonly"), "r-xr-xr-x");
    Files.setLastModifiedTime(site.resolve("index.html"), time("2020-01-02T03:04:05Z"));
    Files.setLastModifiedTime(site.resolve("bin/run.sh"), time("2019-05-06T07:08:09Z"));
    Files.setLastModifiedTime(site.resolve("bin/big.dat"), time("2018-01-01T00:00:00Z"));
    Files.setLastModifiedTime(site.resolve("empty/deeper"), time("2017-02-03T04:05:06Z"));
    Files.setLastModifiedTime(site.resolve("empty"), time("2016-02-03T04:05:06Z"));
    Files.setLastModifiedTime(site.resolve("readonly"), time("2015-02-03T04:05:06Z"));
    Files.setLastModifiedTime(site, time("2014-02-03T04:05:06Z"));

    UUID uid = enqueue("site", "copies/site-2");
    runUntilIdle(service, db);

    Job job = done(uid);
    Path copy = base.resolve("copies/site-2");
    assertThat(job.result)
        .containsEntry("target", "copies/site-2")
        .containsEntry("files", 5)
        .containsEntry("folders", 6) // site, bin, private, readonly, empty, empty/deeper
        .containsEntry("links", 1)
        .containsEntry("skipped_links", 1);
    long bytes = big.length + 13 + 18 + 4 + 3;
    assertThat(((Number) job.result.get("bytes")).longValue()).isEqualTo(bytes);
    assertThat(job.itemCount).isEqualTo(5L);
    assertThat(job.bytesIn).isEqualTo(bytes);
    assertThat(job.bytesOut).isEqualTo(bytes);

    assertThat(Files.readString(copy.resolve("index.html"))).isEqualTo("<h1>home</h1>");
    assertThat(Files.readAllBytes(copy.resolve("bin/big.dat"))).isEqualTo(big);
    assertThat(Files.readString(copy.resolve("readonly/frozen.txt"))).isEqualTo("ice");
    for (String name :
        List.of(
            "index.html",
            "bin/run.sh",
            "bin/big.dat",
            "private",
            "private/notes.txt",
            "readonly",
            "readonly/frozen.txt",
            "empty",
            "empty/deeper")) {
      assertThat(permissions(copy.resolve(name)))
          .as(name)
          .isEqualTo(permissions(site.resolve(name)));
      assertThat(modified(copy.resolve(name))).as(name).isEqualTo(modified(site.resolve(name)));
    }
    assertThat(modified(copy)).isEqualTo(time("2014-02-03T04:05:06Z"));
    assertThat(Files.isDirectory(copy.resolve("empty/deeper"))).isTrue();
    assertThat(Files.isSymbolicLink(copy.resolve("latest.html"))).isTrue();
    assertThat(Files.readSymbolicLink(copy.resolve("latest.html")))
        .isEqualTo(Path.of("index.html"));
    assertThat(Files.exists(copy.resolve("leak.txt"), LinkOption.NOFOLLOW_LINKS)).isFalse();
    assertThat(leftovers(base.resolve("copies"))).isEmpty();
    // The source is as it was.
    assertThat(Files.readString(site.resolve("index.html"))).isEqualTo("<h1>home</h1>");
    assertThat(Files.isSymbolicLink(site.resolve("leak.txt"))).isTrue();

    Response status = given().auth().oauth2(token).get("/api/jobs/" + uid);
    status.then().statusCode(200);
    assertThat(status.<String>path("status")).isEqualTo("done");
    assertThat(status.<Float>path("progress.fraction")).isEqualTo(1.0f);
    assertThat(status.<String>path("result.target")).isEqualTo("copies/site-2");
    assertThat(status.<String>path("download_url")).isNull();
  }

  @Test
  void shouldKeepTheFoldersTimeToTheNanosecondAndTheTimesOfLinksToTheMicrosecond()
      throws Exception {
    Path site = base.resolve("site");
    write("site/page.txt", "page");
    Path link = Files.createSymbolicLink(site.resolve("latest.txt"), Path.of("page.txt"));
    // Java sets a link's own times to the microsecond only, the source's as the copy's.
    Files.getFileAttributeView(link, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
        .setTimes(time("2021-04-05T06:07:08.123456Z"), null, null);
    Files.setLastModifiedTime(site, time("2020-01-02T03:04:05.987654321Z"));

    UUID uid = enqueue("site", "copy");
    runUntilIdle(service, db);

    done(uid);
    Path copy = base.resolve("copy");
    assertThat(modified(copy)).isEqualTo(time("2020-01-02T03:04:05.987654321Z"));
    assertThat(modified(copy.resolve("latest.txt"))).isEqualTo(time("2021-04-05T06:07:08.123456Z"));
    assertThat(Files.readString(copy.resolve("latest.txt"))).isEqualTo("page");
  }

  @Test
  void shouldLeaveOutALinkThatLeadsOutFromTheCopyWithoutTouchingItsFolder() throws Exception {
    // From <owner's folder>/deep/site/ro/up.txt, ../../../<name> is inside the owner's folder;
    // from <owner's folder>/flat/ro/up.txt it is files/user/<name>: someone else's.
    String name = owner + "-y.txt";
    write(name, "mine");
    Path foreign = base.resolveSibling(name);
    Files.writeString(foreign, "someone else's");
    try {
      write("deep/site/ro/page.txt", "page");
      Path ro = base.resolve("deep/site/ro");
      Files.createSymbolicLink(ro.resolve("up.txt"), Path.of("../../../" + name));
      chmod(ro, "r-xr-xr-x");
      Files.setLastModifiedTime(ro, time("2019-03-04T05:06:07Z"));

      UUID uid = enqueue("deep/site", "flat");
      runUntilIdle(service, db);

      Job job = done(uid);
      assertThat(job.result).containsEntry("skipped_links", 1).containsEntry("links", 0);
      Path copied = base.resolve("flat/ro");
      assertThat(Files.exists(copied.resolve("up.txt"), LinkOption.NOFOLLOW_LINKS)).isFalse();
      assertThat(Files.readString(copied.resolve("page.txt"))).isEqualTo("page");
      assertThat(permissions(copied)).isEqualTo("r-xr-xr-x");
      assertThat(modified(copied)).isEqualTo(time("2019-03-04T05:06:07Z"));
    } finally {
      Files.deleteIfExists(foreign);
      chmod(base.resolve("deep/site/ro"), "rwxr-xr-x");
    }
  }

  @Test
  void shouldCopyEveryFileOfALargerTreeOnSeveralThreads() throws Exception {
    // More files in one folder than one thread takes at a time, and more folders than threads.
    Random random = new Random(11);
    Map<String, byte[]> written = new java.util.HashMap<>();
    for (int i = 0; i < 150; i++) {
      String name = "tree/" + (i < 100 ? "many" : "f" + (i % 7)) + "/file-" + i + ".bin";
      byte[] content = new byte[random.nextInt(200_000)];
      random.nextBytes(content);
      Path file = base.resolve(name);
      Files.createDirectories(file.getParent());
      Files.write(file, content);
      Files.setLastModifiedTime(file, FileTime.from(Instant.ofEpochSecond(1_600_000_000L + i, i)));
      written.put(name, content);
    }
    List<Path> folders;
    try (var walk = Files.walk(base.resolve("tree"))) {
      folders = walk.filter(Files::isDirectory).toList();
    }
    for (int i = 0; i < folders.size(); i++) {
      Files.setLastModifiedTime(
          folders.get(i), FileTime.from(Instant.ofEpochSecond(1_500_000_000L + i, 987_654_321)));
    }

    UUID uid = enqueue("tree", "tree-2");
    runUntilIdle(service, db);

    Job job = done(uid);
    long bytes = written.values().stream().mapToLong(b -> b.length).sum();
    assertThat(job.result).containsEntry("files", 150).containsEntry("folders", 9);
    assertThat(((Number) job.result.get("bytes")).longValue()).isEqualTo(bytes);
    for (Map.Entry<String, byte[]> file : written.entrySet()) {
      Path copy = base.resolve(file.getKey().replaceFirst("^tree/", "tree-2/"));
      assertThat(Files.readAllBytes(copy)).as(file.getKey()).isEqualTo(file.getValue());
      assertThat(modified(copy)).isEqualTo(modified(base.resolve(file.getKey())));
    }
    // Every folder's time to the nanosecond, the new folder's own among them.
    for (Path folder : folders) {
      Path copy = base.resolve("tree-2").resolve(base.resolve("tree").relativize(folder));
      assertThat(modified(copy)).as(copy.toString()).isEqualTo(modified(folder));
    }
  }

  @Test
  void shouldCopyEachFileAsItIsWhenCopiedAndLeaveOutOneRemovedAfterTheListing() throws Exception {
    write("src/stays.txt", "short");
    write("src/sub/goes.txt", "gone soon");
    UUID uid = enqueue("src", "dst");
    atStep(
        ForkService.Step.COPY,
        step -> {
          Files.writeString(base.resolve("src/stays.txt"), "longer than it was when listed");
          Files.setLastModifiedTime(base.resolve("src/stays.txt"), time("2022-02-02T02:02:02Z"));
          Files.delete(base.resolve("src/sub/goes.txt"));
        });
    runUntilIdle(service, db);

    Job job = done(uid);
    assertThat(job.result).containsEntry("files", 1);
    Path dst = base.resolve("dst");
    assertThat(Files.readString(dst.resolve("stays.txt")))
        .isEqualTo("longer than it was when listed");
    assertThat(modified(dst.resolve("stays.txt"))).isEqualTo(time("2022-02-02T02:02:02Z"));
    assertThat(dst.resolve("sub")).isEmptyDirectory();
    assertThat(leftovers(base)).isEmpty();
  }

  @Test
  void shouldNeverReadThroughAListedFolderSwappedForALinkBeforeTheCopy() throws Exception {
    write("src/a.txt", "a");
    write("src/sub/secret.txt", "mine"); // the name of the file outside, listed here
    UUID uid = enqueue("src", "dst");
    atStep(ForkService.Step.COPY, swapForLinkOut("src/sub"));
    runUntilIdle(service, db);

    Job failed = job(uid);
    assertThat(failed.status).isEqualTo(JobStatus.FAILED);
    assertThat(failed.error)
        .contains("\"src/sub\" changed while the fork was reading it")
        .doesNotContain(data.root().toString());
    assertThat(base.resolve("dst")).doesNotExist();
    assertThat(leftovers(base)).isEmpty();
  }

  @Test
  void shouldNeverReadAListedFileSwappedForALinkOrAPipeBeforeTheCopy() throws Exception {
    write("one/secret.txt", "mine");
    write("two/data.txt", "mine too");
    UUID first = enqueue("one", "one-copy");
    atStep(
        ForkService.Step.COPY,
        step -> {
          Files.delete(base.resolve("one/secret.txt"));
          Files.createSymbolicLink(base.resolve("one/secret.txt"), outside.resolve("secret.txt"));
        });
    runUntilIdle(service, db);
    UUID second = enqueue("two", "two-copy");
    atStep(
        ForkService.Step.COPY,
        step -> {
          Files.delete(base.resolve("two/data.txt"));
          mkfifo(base.resolve("two/data.txt")); // opening it to read would wait for a writer
        });
    runUntilIdle(service, db);

    for (UUID uid : List.of(first, second)) {
      Job failed = job(uid);
      assertThat(failed.status).isEqualTo(JobStatus.FAILED);
      assertThat(failed.error)
          .contains("changed while the fork was reading it: it is no longer a regular file")
          .doesNotContain(data.root().toString());
    }
    assertThat(job(first).error).contains("\"one/secret.txt\"");
    assertThat(job(second).error).contains("\"two/data.txt\"");
    assertThat(base.resolve("one-copy")).doesNotExist();
    assertThat(base.resolve("two-copy")).doesNotExist();
    assertThat(leftovers(base)).isEmpty();
  }

  @Test
  void shouldNotCopyLinksMadeAfterTheEnqueueThatLeadOut() throws Exception {
    write("src/a.txt", "a");
    write("elsewhere/in.txt", "in");
    UUID uid = enqueue("src", "dst");
    Files.createSymbolicLink(base.resolve("src/escape"), outside);
    Files.createSymbolicLink(base.resolve("src/secret.txt"), outside.resolve("secret.txt"));
    Files.createSymbolicLink(base.resolve("src/in.txt"), base.resolve("elsewhere/in.txt"));
    runUntilIdle(service, db);

    Job job = done(uid);
    Path dst = base.resolve("dst");
    assertThat(job.result).containsEntry("skipped_links", 2).containsEntry("links", 1);
    assertThat(Files.exists(dst.resolve("escape"), LinkOption.NOFOLLOW_LINKS)).isFalse();
    assertThat(Files.exists(dst.resolve("secret.txt"), LinkOption.NOFOLLOW_LINKS)).isFalse();
    assertThat(Files.readString(dst.resolve("in.txt"))).isEqualTo("in");
    assertThat(Files.readString(dst.resolve("a.txt"))).isEqualTo("a");
  }

  @Test
  void shouldDropARelativeLinkThatWouldLeadOutFromTheCopysPlace() throws Exception {
    // From <owner's folder>/deep/site/up.txt, ../../<owner>-x.txt is <owner's
    // folder>/<owner>-x.txt;
    // from <owner's folder>/flat/up.txt the same text names files/user/<owner>-x.txt: another
    // owner's folder.
    String name = owner + "-x.txt";
    write(name, "mine");
    Path foreign = base.resolveSibling(name);
    Files.writeString(foreign, "someone else's");
    try {
      write("deep/site/page.txt", "page");
      Files.createSymbolicLink(base.resolve("deep/site/up.txt"), Path.of("../../" + name));
      assertThat(Files.readString(base.resolve("deep/site/up.txt"))).isEqualTo("mine");

      UUID uid = enqueue("deep/site", "flat");
      runUntilIdle(service, db);

      Job job = done(uid);
      assertThat(job.result).containsEntry("skipped_links", 1).containsEntry("links", 0);
      assertThat(Files.exists(base.resolve("flat/up.txt"), LinkOption.NOFOLLOW_LINKS)).isFalse();
      assertThat(Files.readString(base.resolve("flat/page.txt"))).isEqualTo("page");
    } finally {
      Files.deleteIfExists(foreign);
    }
  }

  @Test
  void shouldDropALinkThatClimbsOutThroughALinkToItsOwnFolderFromTheCopysPlace() throws Exception {
    // s -> . at every level: each "s/.." climbs one real level, though the text normalizes to
    // just the name. From <owner's folder>/deep/site/up.txt it leads to <owner's folder>/<name>;
    // from <owner's folder>/flat/up.txt to files/user/<name>: another owner's.
    String name = owner + "-z.txt";
    write(name, "mine");
    Path foreign = base.resolveSibling(name);
    Files.writeString(foreign, "someone else's");
    try {
      write("deep/site/page.txt", "page");
      Files.createSymbolicLink(base.resolve("s"), Path.of("."));
      Files.createSymbolicLink(base.resolve("deep/s"), Path.of("."));
      Files.createSymbolicLink(base.resolve("deep/site/s"), Path.of("."));
      Files.createSymbolicLink(base.resolve("deep/site/up.txt"), Path.of("s/../s/../" + name));
      assertThat(Files.readString(base.resolve("deep/site/up.txt"))).isEqualTo("mine");

      UUID uid = enqueue("deep/site", "flat");
      runUntilIdle(service, db);

      Job job = done(uid);
      assertThat(job.result).containsEntry("skipped_links", 1).containsEntry("links", 1);
      assertThat(Files.exists(base.resolve("flat/up.txt"), LinkOption.NOFOLLOW_LINKS)).isFalse();
      assertThat(Files.readSymbolicLink(base.resolve("flat/s"))).isEqualTo(Path.of("."));
      assertThat(Files.readString(base.resolve("flat/page.txt"))).isEqualTo("page");
    } finally {
      Files.deleteIfExists(foreign);
    }
  }

  @Test
  void shouldFailAtOnceInWordsWhenTheCopyCannotFit() throws Exception {
    write("src/a.txt", "a");
    // 40 MiB that take no room here (a sparse file), though a copy would write them all.
    try (java.io.RandomAccessFile big =
        new java.io.RandomAccessFile(base.resolve("src/big.bin").toFile(), "rw")) {
      big.setLength(40L * 1024 * 1024 - 64 * 1024);
    }
    ClientProxy.unwrap(service).measureSpaceWith(folder -> 23L * 1024 * 1024 + 5);
    UUID uid = enqueue("src", "dst");
    List<Long> copied = new java.util.ArrayList<>();
    atStep(ForkService.Step.COPY, step -> copied.add(1L));
    runUntilIdle(service, db);

    Job job = job(uid);
    assertThat(job.status).isEqualTo(JobStatus.FAILED);
    assertThat(job.error)
        .isEqualTo("not enough space on the data volume: needs about 40 MiB, 23 MiB free");
    assertThat(copied).as("failed before the copy began").isEmpty();
    assertThat(base.resolve("dst")).doesNotExist();
    assertThat(leftovers(base)).isEmpty();
  }

  @Test
  void shouldSayInWordsWhenTheVolumeFillsUpWhileCopying() throws Exception {
    Random random = new Random(5);
    for (int i = 0; i < 3; i++) {
      byte[] noise = new byte[1024 * 1024];
      random.nextBytes(noise);
      Files.createDirectories(base.resolve("src"));
      Files.write(base.resolve("src/n" + i + ".bin"), noise);
    }
    // The estimate is wrong (the volume says it has room), and the 1 MiB volume under the
    // service's own folder, where the copy is made, fills up.
    ClientProxy.unwrap(service).measureSpaceWith(folder -> 1024L * 1024 * 1024);
    UUID uid = enqueue("src", "dst");
    Path own = Files.createDirectories(data.root().resolve("tmp/fork"));
    try (SmallVolume volume = SmallVolume.mount(own, "1m")) {
      if (!volume.mounted()) {
        atStep(
            ForkService.Step.COPY,
            step -> {
              throw new java.io.IOException("No space left on device");
            });
      }
      runUntilIdle(service, db);

      Job job = job(uid);
      assertThat(job.status).isEqualTo(JobStatus.FAILED);
      assertThat(job.error)
          .isEqualTo(
              "not enough space on the data volume: it filled up while the job was writing"
                  + " (1024 MiB were free when it started)");
      assertThat(base.resolve("dst")).doesNotExist();
      assertThat(leftovers(base)).isEmpty();
    }
  }

  @Test
  void shouldFailWithoutTouchingATargetThatAppearedAfterTheEnqueue() throws Exception {
    write("src/a.txt", "new content");
    UUID uid = enqueue("src", "dst");
    UUID second = enqueue("src", "dst2");
    write("dst/keep.txt", "theirs");
    Files.createDirectories(base.resolve("dst2")); // an empty folder is a target all the same
    runUntilIdle(service, db);

    for (UUID failedUid : List.of(uid, second)) {
      Job failed = job(failedUid);
      assertThat(failed.status).isEqualTo(JobStatus.FAILED);
      assertThat(failed.error).contains("already exists").doesNotContain(data.root().toString());
    }
    assertThat(Files.readString(base.resolve("dst/keep.txt"))).isEqualTo("theirs");
    try (Stream<Path> inDst = Files.list(base.resolve("dst"))) {
      assertThat(inDst).hasSize(1);
    }
    try (Stream<Path> inDst2 = Files.list(base.resolve("dst2"))) {
      assertThat(inDst2).isEmpty();
    }
    assertThat(leftovers(base)).isEmpty();
  }

  @Test
  void shouldNeverRenameTheCopyThroughAParentSwappedForALinkOnceTheCopyIsDone() throws Exception {
    write("src/a.txt", "a");
    write("drafts/mine.txt", "mine");
    UUID uid = enqueue("src", "drafts/copy");
    atStep(ForkService.Step.RENAME, swapForLinkOut("drafts"));
    runUntilIdle(service, db);

    assertThat(outsideNames()).containsExactly("secret.txt");
    Job failed = job(uid);
    assertThat(failed.status).isEqualTo(JobStatus.FAILED);
    assertThat(failed.error)
        .contains("\"drafts/copy\" changed while the fork was being placed")
        .doesNotContain(data.root().toString());
    assertThat(base.resolve("drafts-moved/copy")).doesNotExist();
    assertThat(leftovers(base)).isEmpty();
  }

  @Test
  void shouldNeverCreateTheTargetsParentsThroughAFolderSwappedForALink() throws Exception {
    write("src/a.txt", "a");
    write("drafts/mine.txt", "mine");
    UUID uid = enqueue("src", "drafts/2026/06/copy");
    atStep(ForkService.Step.CREATE_PARENTS, swapForLinkOut("drafts"));
    runUntilIdle(service, db);

    assertThat(outsideNames()).containsExactly("secret.txt");
    Job failed = job(uid);
    assertThat(failed.status).isEqualTo(JobStatus.FAILED);
    assertThat(failed.error)
        .contains("\"drafts/2026/06/copy\" changed while the fork was being placed")
        .doesNotContain(data.root().toString());
    assertThat(base.resolve("drafts-moved/2026")).doesNotExist();
    assertThat(leftovers(base)).isEmpty();
  }

  @Test
  void shouldFailWhenTheSourceLeadsOutByTheTimeItRuns() throws Exception {
    write("src/a.txt", "a");
    UUID uid = enqueue("src", "dst");
    Trees.delete(base.resolve("src"));
    Files.createSymbolicLink(base.resolve("src"), outside);
    runUntilIdle(service, db);

    Job failed = job(uid);
    assertThat(failed.status).isEqualTo(JobStatus.FAILED);
    assertThat(failed.error).contains("\"src\" leads outside your folder");
    assertThat(base.resolve("dst")).doesNotExist();
    assertThat(leftovers(base)).isEmpty();
  }

  @Test
  void shouldRemoveOnlyWhatAFailedForkLeftWhenTheJobsExpire() throws Exception {
    write("src/a.txt", "a");
    clock.set(Instant.parse("2026-06-01T00:00:00Z"));
    UUID kept = enqueue("src", "done");
    UUID failed = enqueue("src", "blocked");
    write("blocked/theirs.txt", "theirs");
    runUntilIdle(service, db);
    assertThat(done(kept).result).containsEntry("target", "done");
    assertThat(job(failed).status).isEqualTo(JobStatus.FAILED);
    // What a crash in the middle of the failed fork would have left.
    Path leftover = Files.createDirectories(data.root().resolve("tmp/fork/" + failed + "/sub"));
    Files.writeString(leftover.resolve("half.txt"), "half");
    chmod(leftover, "r-xr-xr-x");

    clock.advance(Duration.ofDays(8));
    assertThat(service.runOnce().swept()).isGreaterThanOrEqualTo(2);

    assertThat(queue.getJob(kept)).isEmpty();
    assertThat(queue.getJob(failed)).isEmpty();
    // The fork is durable: expiry keeps the finished target and never touches another's folder.
    assertThat(Files.readString(base.resolve("done/a.txt"))).isEqualTo("a");
    assertThat(Files.readString(base.resolve("blocked/theirs.txt"))).isEqualTo("theirs");
    assertThat(leftovers(base)).isEmpty();
    assertThat(Files.readString(base.resolve("src/a.txt"))).isEqualTo("a");
  }
}
