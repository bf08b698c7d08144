package io.asyncjobs.files;

import io.asyncjobs.config.JobsConfig;
import io.asyncjobs.storage.DataDirectory;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
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
 * {@code files/} is missing or empty, or already in the current layout (a restored backup, or files
 * copied in before the first start): every entry a folder named after a known owner kind, holding
 * only folders (one per owner id). Its name is none that {@link FileScope#segment} makes, so no
 * owner kind can collide with it. A process that serves no HTTP (the admin CLI) reads no files and
 * checks nothing.
 */
@ApplicationScoped
public class FileLayout {

  /** The marker's name inside {@code files/}. */
  public static final String MARKER = "%layout";

  /** What the marker holds: the layout, for a person who finds it. */
  static final String LAYOUT = "files/<owner kind>/<owner id>/ (async-jobs, see docs/files.md)\n";

  /**
   * The owner kinds every installation has: {@code user} (tokens without an owner kind claim, by
   * default) and {@code service} (service accounts, which the enqueue routes treat apart).
   */
  static final Set<String> KNOWN_KINDS = Set.of("user", "service");

  void check(
      @Observes StartupEvent start,
      DataDirectory data,
      JobsConfig config,
      @ConfigProperty(name = "quarkus.http.host-enabled", defaultValue = "true") boolean serving) {
    if (serving) {
      prepare(data.root(), config.auth().defaultOwnerKind());
    }
  }

  /**
   * Writes the marker on a fresh {@code files/} or one already in the current layout, accepts a
   * marked one, and refuses the old layout.
   *
   * @param defaultOwnerKind the owner kind of tokens without the claim: a kind folder too
   * @throws IllegalStateException naming the folders and what to do, on the old layout
   */
  static void prepare(Path root, String defaultOwnerKind) {
    Path files = root.resolve(FileScope.FILES);
    Path marker = files.resolve(MARKER);
    if (Files.isRegularFile(marker)) {
      return;
    }
    Set<String> kinds = new HashSet<>();
    for (String kind : KNOWN_KINDS) {
      kinds.add(FileScope.segment(kind));
    }
    kinds.add(FileScope.segment(defaultOwnerKind));
    List<String> old = oldLayoutEntries(files, kinds);
    if (!old.isEmpty()) {
      throw new IllegalStateException(
          files
              + " holds the old layout, one folder per owner id (files/<owner id>/, here "
              + String.join(", ", old)
              + "), where owners of different kinds with the same id shared a folder. Move it to"
              + " files/<owner kind>/<owner id>/ as docs/files.md (\"Moving folders of the old"
              + " layout\") shows, then start again; if these are folders of owner kinds your"
              + " tokens carry, write the marker file as that section shows; in dev mode or tests,"
              + " where the files are throw-away, delete "
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

  /**
   * The first few names in {@code files/} that do not fit the current layout: anything but a folder
   * named after one of {@code kinds} that holds only folders. An owner id folder of the old layout
   * that happens to be named like a kind holds the owner's files directly, so it does not fit.
   */
  private static List<String> oldLayoutEntries(Path files, Set<String> kinds) {
    if (!Files.isDirectory(files)) {
      return List.of();
    }
    try (Stream<Path> list = Files.list(files)) {
      List<String> old = new ArrayList<>();
      for (Path entry : list.sorted().toList()) {
        if (!kinds.contains(entry.getFileName().toString()) || !holdsOnlyFolders(entry)) {
          old.add(entry.getFileName().toString());
        }
      }
      return old.subList(0, Math.min(5, old.size()));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list " + files, e);
    }
  }

  private static boolean holdsOnlyFolders(Path folder) throws IOException {
    if (!Files.isDirectory(folder, LinkOption.NOFOLLOW_LINKS)) {
      return false;
    }
    try (Stream<Path> list = Files.list(folder)) {
      return list.allMatch(p -> Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS));
    }
  }
}
