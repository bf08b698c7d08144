package io.asyncjobs.files;

import io.asyncjobs.storage.DataDirectory;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.stream.Stream;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * Makes sure {@code files/} is laid out as {@link FileScope#ofOwner} expects, {@code files/<owner
 * kind>/<owner id>/}, and stops the start when it holds the old layout, one folder per owner id
 * ({@code files/<owner id>/}), which owners of two kinds with the same id shared. Which kind an old
 * folder belongs to is the operator's call (docs/files.md shows the one-off move), and moving it
 * would also strand whatever still writes there: so the service never moves it itself.
 *
 * <p>A marker file, {@link #MARKER}, tells the layouts apart; it is written on a volume whose
 * {@code files/} is missing or empty. Its name is none that {@link FileScope#segment} makes, so no
 * owner kind can collide with it. A process that serves no HTTP (the admin CLI) reads no files and
 * checks nothing.
 */
@ApplicationScoped
public class FileLayout {

  /** The marker's name inside {@code files/}. */
  public static final String MARKER = "%layout";

  /** What the marker holds: the layout, for a person who finds it. */
  static final String LAYOUT = "files/<owner kind>/<owner id>/ (async-jobs, see docs/files.md)\n";

  void check(
      @Observes StartupEvent start,
      DataDirectory data,
      @ConfigProperty(name = "quarkus.http.host-enabled", defaultValue = "true") boolean serving) {
    if (serving) {
      prepare(data.root());
    }
  }

  /**
   * Writes the marker on a fresh {@code files/}, accepts a marked one, and refuses the old layout.
   *
   * @throws IllegalStateException naming the folder and what to do, on the old layout
   */
  static void prepare(Path root) {
    Path files = root.resolve(FileScope.FILES);
    Path marker = files.resolve(MARKER);
    if (Files.isRegularFile(marker)) {
      return;
    }
    List<String> found = entries(files);
    if (!found.isEmpty()) {
      throw new IllegalStateException(
          files
              + " holds the old layout, one folder per owner id (files/<owner id>/, here "
              + String.join(", ", found)
              + "), where owners of different kinds with the same id shared a folder. Move it to"
              + " files/<owner kind>/<owner id>/ as docs/files.md (\"Moving folders of the old"
              + " layout\") shows, then start again; in dev mode or tests, where the files are"
              + " throw-away, delete "
              + files
              + " instead.");
    }
    try {
      Files.createDirectories(files);
      // Written aside (in the data directory's own tmp/, on the same volume) and renamed into
      // place, so a replica starting at the same time never reads half a marker; the same text
      // from two replicas is the same file.
      Path aside = Files.createTempFile(Files.createDirectories(root.resolve("tmp")), "layout", "");
      Files.writeString(aside, LAYOUT, StandardCharsets.UTF_8);
      Files.move(
          aside, marker, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + marker, e);
    }
  }

  /** The first few names in {@code files/}. */
  private static List<String> entries(Path files) {
    if (!Files.isDirectory(files)) {
      return List.of();
    }
    try (Stream<Path> list = Files.list(files)) {
      return list.map(p -> p.getFileName().toString()).sorted().limit(5).toList();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list " + files, e);
    }
  }
}
