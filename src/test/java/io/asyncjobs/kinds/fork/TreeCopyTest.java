package io.asyncjobs.kinds.fork;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.asyncjobs.files.FileScope;
import io.asyncjobs.queue.Owner;
import java.io.InterruptedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The copy's threads: an interrupt of the job's thread stops all of them before the copy returns.
 */
class TreeCopyTest {

  static final int FOLDERS = 4;
  static final int FILES_EACH = 2;

  /** Two copy chunks: a thread is in the middle of a file for a while. */
  static final int SIZE = 16 << 20;

  @TempDir Path root;
  FileScope scope;
  Path source;
  Path temp;

  @BeforeEach
  void tree() throws Exception {
    scope = FileScope.ofOwner(root, new Owner("user", "o"));
    source = scope.ensureBase().resolve("src");
    // Each file its own bytes: a chunk written at the wrong place or into another file shows.
    Random random = new Random(5);
    byte[] content = new byte[SIZE];
    for (int f = 0; f < FOLDERS; f++) {
      Path folder = Files.createDirectories(source.resolve("d" + f));
      for (int i = 0; i < FILES_EACH; i++) {
        random.nextBytes(content);
        Files.write(folder.resolve("file-" + i), content);
      }
    }
    temp = Files.createDirectories(root.resolve("tmp/fork")).resolve("x");
  }

  @Test
  void shouldStopEveryHelperBeforeReturningWhenTheJobsThreadIsInterrupted() throws Exception {
    String name = "fork-job-" + UUID.randomUUID();
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    AtomicReference<TreeCopy> started = new AtomicReference<>();
    AtomicLong bytesAtReturn = new AtomicLong(-1);
    Thread job =
        new Thread(
            () -> {
              try (SourceListing listing = SourceListing.of(scope, source.toRealPath(), "src")) {
                // Interrupted at its first report, after its first chunk, as a cancel or a timeout
                // would interrupt it; the helpers are in the middle of their own files then.
                TreeCopy copy =
                    new TreeCopy(
                        listing,
                        List.of(),
                        temp,
                        (bytes, files) -> Thread.currentThread().interrupt());
                started.set(copy);
                try {
                  copy.run(FOLDERS);
                } finally {
                  bytesAtReturn.set(copy.bytes());
                }
              } catch (Throwable e) {
                thrown.set(e);
              }
            },
            name);
    job.start();
    job.join(30_000);
    // Whatever helper (named after the job's thread) is still there would write into the
    // temporary folder after the copy returned, which the job then removes.
    for (Thread thread : Thread.getAllStackTraces().keySet()) {
      if (thread.getName().startsWith(name + "-copy-")) {
        thread.join(30_000);
      }
    }

    assertThat(job.isAlive()).isFalse();
    assertThat(thrown.get()).isInstanceOf(InterruptedIOException.class);
    assertThat(started.get().bytes())
        .as("bytes copied after the copy returned")
        .isEqualTo(bytesAtReturn.get());
    assertThat(started.get().files()).isLessThan((long) FOLDERS * FILES_EACH);
  }

  @Test
  void shouldStopAtTheNextFileWhenInterruptedInATreeOfEmptyFiles() throws Exception {
    Path empty = scope.ensureBase().resolve("empty");
    Files.createDirectories(empty);
    for (int i = 0; i < 200; i++) {
      Files.createFile(empty.resolve("e-" + i));
    }
    try (SourceListing listing = SourceListing.of(scope, empty.toRealPath(), "empty")) {
      // Interrupted at its first report, after its first file, as a cancel would interrupt it.
      TreeCopy copy =
          new TreeCopy(
              listing, List.of(), temp, (bytes, files) -> Thread.currentThread().interrupt());
      try {
        assertThatThrownBy(() -> copy.run(1)).isInstanceOf(InterruptedIOException.class);
      } finally {
        Thread.interrupted(); // clears the flag for the next test
      }
      assertThat(copy.files()).as("files copied after the interrupt").isEqualTo(1);
    }
  }

  @Test
  void shouldNameTheCopysFileWhenWritingItFails() throws Exception {
    try (SourceListing listing = SourceListing.of(scope, source.toRealPath(), "src")) {
      AtomicReference<Path> taken = new AtomicReference<>();
      // At the first report, another file takes the place of a file not copied yet.
      TreeCopy copy =
          new TreeCopy(
              listing,
              List.of(),
              temp,
              (bytes, files) -> {
                for (SourceListing.Item item : listing.files()) {
                  Path place =
                      temp.resolve(listing.folders().get(item.folder()).relative())
                          .resolve(item.name());
                  if (taken.get() == null && !Files.exists(place)) {
                    try {
                      taken.set(Files.createFile(place));
                    } catch (java.io.IOException e) {
                      throw new java.io.UncheckedIOException(e);
                    }
                  }
                }
              });

      assertThatThrownBy(() -> copy.run(1))
          .isInstanceOf(FileAlreadyExistsException.class)
          .extracting(e -> ((FileSystemException) e).getFile())
          .isEqualTo(taken.get().toString());
    }
  }

  @Test
  void shouldCopyEveryFileWhenNothingStopsIt() throws Exception {
    try (SourceListing listing = SourceListing.of(scope, source.toRealPath(), "src")) {
      TreeCopy copy = new TreeCopy(listing, List.of(), temp, (bytes, files) -> {});
      copy.run(FOLDERS);

      assertThat(copy.files()).isEqualTo((long) FOLDERS * FILES_EACH);
      assertThat(copy.bytes()).isEqualTo((long) FOLDERS * FILES_EACH * SIZE);
      for (int f = 0; f < FOLDERS; f++) {
        for (int i = 0; i < FILES_EACH; i++) {
          String file = "d" + f + "/file-" + i;
          assertThat(Files.mismatch(temp.resolve(file), source.resolve(file)))
              .as(file)
              .isEqualTo(-1L);
        }
      }
    }
  }
}
