package io.asyncjobs.kinds.fork;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The last step of a fork: the rename never replaces what took the target's name meanwhile. */
class ForkPublishTest {

  @TempDir Path dir;
  Path temp;

  @BeforeEach
  void completeCopy() throws Exception {
    temp = Files.createDirectory(dir.resolve(".fork-x.partial"));
    Files.writeString(temp.resolve("a.txt"), "copied");
  }

  @Test
  void shouldRenameTheCopyToAFreeTarget() throws Exception {
    ForkService.publish(temp, dir.resolve("target"), "target");

    assertThat(Files.readString(dir.resolve("target/a.txt"))).isEqualTo("copied");
    assertThat(temp).doesNotExist();
  }

  @Test
  void shouldNotReplaceAnEmptyFolderAFileOrAFullFolderThatAppeared() throws Exception {
    // A bare rename(2) would silently replace the empty folder.
    Path empty = Files.createDirectory(dir.resolve("empty"));
    Path file = Files.writeString(dir.resolve("file"), "theirs");
    Path full = Files.createDirectory(dir.resolve("full"));
    Files.writeString(full.resolve("b.txt"), "theirs");

    for (Path taken : new Path[] {empty, file, full}) {
      assertThatThrownBy(() -> ForkService.publish(temp, taken, taken.getFileName().toString()))
          .isInstanceOf(ForkService.TargetExistsException.class)
          .hasMessageContaining("already exists");
    }

    assertThat(empty).isEmptyDirectory();
    assertThat(Files.readString(file)).isEqualTo("theirs");
    assertThat(Files.readString(full.resolve("b.txt"))).isEqualTo("theirs");
    assertThat(Files.readString(temp.resolve("a.txt"))).isEqualTo("copied");
  }
}
