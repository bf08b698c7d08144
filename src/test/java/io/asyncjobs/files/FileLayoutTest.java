package io.asyncjobs.files;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileLayoutTest {

  @TempDir Path root;

  @Test
  void shouldMarkAFreshVolumeAndAcceptItFromThenOn() throws Exception {
    FileLayout.prepare(root, "user");

    Path marker = root.resolve("files").resolve(FileLayout.MARKER);
    assertThat(Files.readString(marker)).isEqualTo(FileLayout.LAYOUT);
    Files.createDirectories(root.resolve("files/user/alice"));
    FileLayout.prepare(root, "user");
    assertThat(root.resolve("files/user/alice")).isDirectory();
    try (var left = Files.list(root.resolve("tmp"))) {
      assertThat(left).as("no marker left half-written").isEmpty();
    }
  }

  @Test
  void shouldMarkAnEmptyFilesFolder() throws Exception {
    Files.createDirectories(root.resolve("files"));

    FileLayout.prepare(root, "user");

    assertThat(root.resolve("files").resolve(FileLayout.MARKER)).isRegularFile();
  }

  @Test
  void shouldRefuseTheOldLayoutNamingItsFoldersAndMoveNothing() throws Exception {
    Files.createDirectories(root.resolve("files/alice/docs"));
    Files.createDirectories(root.resolve("files/bob"));

    assertThatThrownBy(() -> FileLayout.prepare(root, "user"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("old layout")
        .hasMessageContaining("alice, bob")
        .hasMessageContaining("files/<owner kind>/<owner id>/")
        .hasMessageContaining("docs/files.md");
    assertThat(root.resolve("files/alice/docs")).isDirectory();
    assertThat(root.resolve("files").resolve(FileLayout.MARKER)).doesNotExist();
  }

  @Test
  void shouldAcceptAndMarkAVolumeFilledInTheCurrentLayoutBeforeTheFirstStart() throws Exception {
    // A restored backup, or files copied in before the service ever started.
    Files.createDirectories(root.resolve("files/user/alice/docs"));
    Files.writeString(root.resolve("files/user/alice/docs/a.txt"), "a");
    Files.createDirectories(root.resolve("files/service/bot"));

    FileLayout.prepare(root, "user");

    assertThat(Files.readString(root.resolve("files").resolve(FileLayout.MARKER)))
        .isEqualTo(FileLayout.LAYOUT);
    assertThat(root.resolve("files/user/alice/docs/a.txt")).hasContent("a");
    FileLayout.prepare(root, "user");
  }

  @Test
  void shouldRefuseAnOwnerIdFolderThatIsNamedLikeAnOwnerKindButHoldsFiles() throws Exception {
    // The old layout's folder of the owner id "user": its files lie directly in it.
    Files.createDirectories(root.resolve("files/user/docs"));
    Files.writeString(root.resolve("files/user/notes.txt"), "n");

    assertThatThrownBy(() -> FileLayout.prepare(root, "user"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("old layout")
        .hasMessageContaining("user");
    assertThat(root.resolve("files").resolve(FileLayout.MARKER)).doesNotExist();
  }

  @Test
  void shouldRefuseOldLayoutFoldersBesideOwnerKindFoldersNamingOnlyThem() throws Exception {
    Files.createDirectories(root.resolve("files/user/alice"));
    Files.createDirectories(root.resolve("files/bob/docs"));

    assertThatThrownBy(() -> FileLayout.prepare(root, "user"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("old layout")
        .hasMessageContaining("here bob)");
    assertThat(root.resolve("files").resolve(FileLayout.MARKER)).doesNotExist();
  }

  @Test
  void shouldTakeTheConfiguredDefaultOwnerKindForAKindFolder() throws Exception {
    Files.createDirectories(root.resolve("files/person/alice/docs"));

    assertThatThrownBy(() -> FileLayout.prepare(root, "user")).hasMessageContaining("here person)");
    FileLayout.prepare(root, "person");

    assertThat(root.resolve("files").resolve(FileLayout.MARKER)).isRegularFile();
  }

  @Test
  void shouldNeverNameAnOwnersFolderLikeTheMarker() {
    assertThat(FileScope.segment(FileLayout.MARKER)).isNotEqualTo(FileLayout.MARKER);
  }
}
