package io.asyncjobs.kinds.fork;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.asyncjobs.files.FileScope;
import io.asyncjobs.files.PathRefusedException;
import io.asyncjobs.queue.Owner;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The last step of a fork: the rename never replaces what took the target's name meanwhile, and
 * never goes through a folder that became a link after it was located.
 */
class TargetFolderTest {

  @TempDir Path root;
  FileScope scope;
  Path base;
  Path temp;
  Path outside;

  @BeforeEach
  void completeCopy() throws Exception {
    scope = FileScope.ofOwner(root, new Owner("user", "o"));
    base = scope.ensureBase();
    outside = Files.createDirectories(root.resolve("outside"));
    temp = Files.createDirectories(root.resolve("tmp/fork/x"));
    Files.writeString(temp.resolve("a.txt"), "copied");
  }

  void place(String target) throws Exception {
    Path tgt = scope.resolve(target);
    try (TargetFolder folder =
        TargetFolder.open(TargetFolder.locate(scope, tgt, target), temp, target)) {
      folder.place(tgt.getFileName());
    }
  }

  @Test
  void shouldRenameTheCopyToAFreeTargetCreatingTheFoldersAboveIt() throws Exception {
    place("new/deeper/target");

    assertThat(Files.readString(base.resolve("new/deeper/target/a.txt"))).isEqualTo("copied");
    assertThat(temp).doesNotExist();
    try (Stream<Path> left = Files.list(temp.getParent())) {
      assertThat(left).isEmpty(); // no folder made for a missing parent stays behind
    }
  }

  @Test
  void shouldNotReplaceAnEmptyFolderAFileOrAFullFolderThatAppeared() throws Exception {
    // A bare rename(2) would silently replace the empty folder.
    Path empty = Files.createDirectory(base.resolve("empty"));
    Path file = Files.writeString(base.resolve("file"), "theirs");
    Path full = Files.createDirectory(base.resolve("full"));
    Files.writeString(full.resolve("b.txt"), "theirs");

    for (String taken : new String[] {"empty", "file", "full"}) {
      assertThatThrownBy(() -> place(taken))
          .isInstanceOf(ForkService.TargetExistsException.class)
          .hasMessageContaining("already exists");
    }

    assertThat(empty).isEmptyDirectory();
    assertThat(Files.readString(file)).isEqualTo("theirs");
    assertThat(Files.readString(full.resolve("b.txt"))).isEqualTo("theirs");
    assertThat(Files.readString(temp.resolve("a.txt"))).isEqualTo("copied");
  }

  @Test
  void shouldRefuseAFolderSwappedForALinkBetweenLocatingAndPlacing() throws Exception {
    Files.createDirectories(base.resolve("drafts"));
    Path tgt = scope.resolve("drafts/more/copy");
    TargetFolder.Location located = TargetFolder.locate(scope, tgt, "drafts/more/copy");
    Files.delete(base.resolve("drafts"));
    Files.createSymbolicLink(base.resolve("drafts"), outside);

    assertThatThrownBy(() -> TargetFolder.open(located, temp, "drafts/more/copy").close())
        .isInstanceOf(PathRefusedException.class)
        .hasMessageContaining("\"drafts/more/copy\" changed while the fork was being placed");
    assertThat(outside).isEmptyDirectory();
    assertThat(Files.readString(temp.resolve("a.txt"))).isEqualTo("copied");
  }

  @Test
  void shouldRefuseATargetWhoseFolderLeadsOutWhenLocated() throws Exception {
    Files.createSymbolicLink(base.resolve("out"), outside);
    Path tgt = base.resolve("out/copy"); // as if the link appeared after scope.resolve

    assertThatThrownBy(() -> TargetFolder.locate(scope, tgt, "out/copy"))
        .isInstanceOf(PathRefusedException.class)
        .hasMessageContaining("\"out/copy\" leads outside your folder");
  }
}
