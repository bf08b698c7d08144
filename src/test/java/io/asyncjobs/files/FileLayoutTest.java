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
    FileLayout.prepare(root);

    Path marker = root.resolve("files").resolve(FileLayout.MARKER);
    assertThat(Files.readString(marker)).isEqualTo(FileLayout.LAYOUT);
    Files.createDirectories(root.resolve("files/user/alice"));
    FileLayout.prepare(root);
    assertThat(root.resolve("files/user/alice")).isDirectory();
    try (var left = Files.list(root.resolve("tmp"))) {
      assertThat(left).as("no marker left half-written").isEmpty();
    }
  }

  @Test
  void shouldMarkAnEmptyFilesFolder() throws Exception {
    Files.createDirectories(root.resolve("files"));

    FileLayout.prepare(root);

    assertThat(root.resolve("files").resolve(FileLayout.MARKER)).isRegularFile();
  }

  @Test
  void shouldRefuseTheOldLayoutNamingItsFoldersAndMoveNothing() throws Exception {
    Files.createDirectories(root.resolve("files/alice/docs"));
    Files.createDirectories(root.resolve("files/bob"));

    assertThatThrownBy(() -> FileLayout.prepare(root))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("old layout")
        .hasMessageContaining("alice, bob")
        .hasMessageContaining("files/<owner kind>/<owner id>/")
        .hasMessageContaining("docs/files.md");
    assertThat(root.resolve("files/alice/docs")).isDirectory();
    assertThat(root.resolve("files").resolve(FileLayout.MARKER)).doesNotExist();
  }

  @Test
  void shouldNeverNameAnOwnersFolderLikeTheMarker() {
    assertThat(FileScope.segment(FileLayout.MARKER)).isNotEqualTo(FileLayout.MARKER);
  }
}
