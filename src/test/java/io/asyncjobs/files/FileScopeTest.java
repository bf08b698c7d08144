package io.asyncjobs.files;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.asyncjobs.queue.Owner;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileScopeTest {

  @TempDir Path dir;
  Path root;
  FileScope alice;

  @BeforeEach
  void tree() throws Exception {
    root = dir.resolve("data");
    Files.createDirectories(root.resolve("files/user/alice/docs"));
    Files.createDirectories(root.resolve("files/user/bob"));
    Files.writeString(root.resolve("files/user/alice/docs/a.txt"), "a");
    Files.writeString(root.resolve("files/user/bob/secret.txt"), "b");
    Files.writeString(dir.resolve("outside.txt"), "x");
    alice = FileScope.ofOwner(root, new Owner("user", "alice"));
  }

  @Test
  void shouldResolvePathsInsideTheCallersFolder() {
    assertThat(alice.resolve("docs/a.txt")).isEqualTo(root.resolve("files/user/alice/docs/a.txt"));
    assertThat(alice.resolve("docs/./../docs/a.txt"))
        .isEqualTo(root.resolve("files/user/alice/docs/a.txt"));
    // A path that does not exist yet (a fork's target) is fine while it stays inside.
    assertThat(alice.resolve("new/folder")).isEqualTo(root.resolve("files/user/alice/new/folder"));
    assertThat(alice.nameOf(alice.resolve("docs"))).isEqualTo("docs");
  }

  @Test
  void shouldNotCreateTheFolderOfACallerWhoseRequestItChecks() {
    FileScope newcomer = FileScope.ofOwner(root, new Owner("user", "newcomer"));
    assertThat(newcomer.resolve("photos")).isEqualTo(root.resolve("files/user/newcomer/photos"));
    assertThatThrownBy(() -> newcomer.resolve("../alice")).isInstanceOf(PathRefusedException.class);
    assertThat(root.resolve("files/user/newcomer")).doesNotExist();
  }

  @Test
  void shouldRefuseTraversalAbsoluteAndMalformedPaths() {
    for (String bad :
        new String[] {"../bob/secret.txt", "docs/../../bob", "/etc/passwd", "", " ", "a\u0000b"}) {
      assertThatThrownBy(() -> alice.resolve(bad)).isInstanceOf(PathRefusedException.class);
    }
  }

  @Test
  void shouldRefuseLinksThatLeadOutButFollowThoseThatStayIn() throws Exception {
    Path base = root.resolve("files/user/alice");
    Files.createSymbolicLink(base.resolve("out.txt"), dir.resolve("outside.txt"));
    Files.createSymbolicLink(base.resolve("bobs"), root.resolve("files/user/bob"));
    Files.createSymbolicLink(base.resolve("dangling"), dir.resolve("missing"));
    Files.createSymbolicLink(base.resolve("mine.txt"), base.resolve("docs/a.txt"));

    assertThatThrownBy(() -> alice.resolve("out.txt")).hasMessageContaining("outside");
    assertThatThrownBy(() -> alice.resolve("bobs/secret.txt")).hasMessageContaining("outside");
    // Even a new name under a link that leads out lands outside.
    assertThatThrownBy(() -> alice.resolve("bobs/new")).hasMessageContaining("outside");
    assertThatThrownBy(() -> alice.resolve("dangling")).hasMessageContaining("nowhere");
    assertThat(alice.resolve("mine.txt")).isEqualTo(base.resolve("mine.txt"));
    assertThat(alice.contains(base.resolve("mine.txt"))).isTrue();
    assertThat(alice.contains(base.resolve("out.txt"))).isFalse();
  }

  @Test
  void shouldOpenOnlyRegularFilesThatAreStillInsideWhenOpened() throws Exception {
    Path base = root.resolve("files/user/alice");
    try (var in = alice.openInputStream(base.resolve("docs/a.txt"))) {
      assertThat(new String(in.readAllBytes())).isEqualTo("a");
    }
    // A link that stays inside is fine.
    Files.createSymbolicLink(base.resolve("mine.txt"), base.resolve("docs/a.txt"));
    try (var in = alice.openInputStream(base.resolve("mine.txt"))) {
      assertThat(new String(in.readAllBytes())).isEqualTo("a");
    }
    // So is a folder link that stays inside; links that lead out are refused, file or folder.
    Files.createSymbolicLink(base.resolve("papers"), base.resolve("docs"));
    try (var in = alice.openInputStream(base.resolve("papers/a.txt"))) {
      assertThat(new String(in.readAllBytes())).isEqualTo("a");
    }
    Files.createSymbolicLink(base.resolve("out.txt"), dir.resolve("outside.txt"));
    assertThatThrownBy(() -> alice.openRead(base.resolve("out.txt")))
        .isInstanceOf(PathRefusedException.class);
    Files.createSymbolicLink(base.resolve("bobs"), root.resolve("files/user/bob"));
    assertThatThrownBy(() -> alice.openRead(base.resolve("bobs/secret.txt")))
        .isInstanceOf(PathRefusedException.class);
    assertThatThrownBy(() -> alice.openRead(base.resolve("docs/missing.txt")))
        .isInstanceOf(NoSuchFileException.class);
    // After a job listed docs/, the folder is swapped for a link to another owner's files.
    Path listed = base.resolve("docs/a.txt");
    Files.move(base.resolve("docs"), base.resolve("docs-old"));
    Files.createSymbolicLink(base.resolve("docs"), root.resolve("files/user/bob"));
    Files.writeString(root.resolve("files/user/bob/a.txt"), "bob's");
    assertThatThrownBy(() -> alice.openRead(listed)).isInstanceOf(PathRefusedException.class);
    // So is a folder on the way swapped for a named pipe, which opening as a folder would wait on.
    Files.move(base.resolve("docs-old"), base.resolve("notes"));
    Path listedNote = base.resolve("notes/a.txt");
    Files.move(base.resolve("notes"), base.resolve("notes-old"));
    assertThat(new ProcessBuilder("mkfifo", base.resolve("notes").toString()).start().waitFor())
        .isZero();
    assertTimeoutPreemptively(
        Duration.ofSeconds(10),
        () ->
            assertThatThrownBy(() -> alice.openRead(listedNote))
                .isInstanceOf(PathRefusedException.class));
    // A file swapped for a named pipe would block the read forever; it is refused instead.
    Path pipe = base.resolve("pipe");
    assertThat(new ProcessBuilder("mkfifo", pipe.toString()).start().waitFor()).isZero();
    assertThatThrownBy(() -> alice.openRead(pipe)).hasMessageContaining("no longer a regular file");
  }

  @Test
  void shouldGiveEachOwnerOneSafeFolderAndAdminsAllOfFiles() {
    assertThat(FileScope.segment("alice")).isEqualTo("alice");
    assertThat(FileScope.segment("..")).isEqualTo("%2E%2E");
    assertThat(FileScope.segment("a/b")).isEqualTo("a%2Fb");
    assertThat(FileScope.ofOwner(root, new Owner("user", "../bob")).base())
        .isEqualTo(root.resolve("files/user/%2E%2E%2Fbob"));

    FileScope admin = FileScope.ofAdmin(root);
    assertThat(admin.resolve("user/bob/secret.txt"))
        .isEqualTo(root.resolve("files/user/bob/secret.txt"));
    assertThatThrownBy(() -> admin.resolve("../artifacts"))
        .isInstanceOf(PathRefusedException.class);
  }

  @Test
  void shouldKeepOwnersOfTwoKindsWithOneIdInTwoFoldersThatCannotCollide() {
    FileScope user = FileScope.ofOwner(root, new Owner("user", "alice"));
    FileScope service = FileScope.ofOwner(root, new Owner("service", "alice"));

    assertThat(user.base()).isEqualTo(root.resolve("files/user/alice"));
    assertThat(service.base()).isEqualTo(root.resolve("files/service/alice"));
    assertThatThrownBy(() -> service.resolve("../../user/alice/docs/a.txt"))
        .isInstanceOf(PathRefusedException.class);
    // A kind is made safe as an id is: it can neither climb out nor name a nested folder, so
    // no kind and id pair names another pair's folder.
    assertThat(FileScope.ofOwner(root, new Owner("..", "x")).base())
        .isEqualTo(root.resolve("files/%2E%2E/x"));
    assertThat(FileScope.ofOwner(root, new Owner("a/b", "c")).base())
        .isNotEqualTo(FileScope.ofOwner(root, new Owner("a", "b/c")).base())
        .isEqualTo(root.resolve("files/a%2Fb/c"));
  }

  @Test
  void shouldOnlyTrustScopesUnderFilesFromAPayload() {
    assertThat(FileScope.fromPayload(root, "files/user/alice").base())
        .isEqualTo(root.resolve("files/user/alice"));
    // An owner id with two dots inside it is a plain name, and its scope must survive the trip.
    FileScope dotted = FileScope.ofOwner(root, new Owner("user", "john..doe"));
    assertThat(FileScope.fromPayload(root, dotted.relative()).base()).isEqualTo(dotted.base());
    for (Object bad :
        new Object[] {
          null, "artifacts", "files/../artifacts", "files/..", "files//x", 7, "/files"
        }) {
      assertThatThrownBy(() -> FileScope.fromPayload(root, bad))
          .isInstanceOf(PathRefusedException.class);
    }
  }
}
