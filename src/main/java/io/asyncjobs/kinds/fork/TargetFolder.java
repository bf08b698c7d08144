package io.asyncjobs.kinds.fork;

import io.asyncjobs.files.FileScope;
import io.asyncjobs.files.PathRefusedException;
import io.asyncjobs.files.Trees;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;

/**
 * The folder a fork is placed in, held open. It is reached from the caller's real folder one level
 * at a time through directory handles that never follow a link, creating the missing levels on the
 * way, and the copy is renamed into it through its handle: a folder swapped for a link after the
 * path was checked makes the fork fail instead of redirecting it out of the caller's folder.
 */
final class TargetFolder implements Closeable {

  /**
   * Where the folder above a target really is, once every link on the way has been followed.
   *
   * @param realBase the scope's folder, after its links
   * @param below the target's parent relative to {@code realBase}; empty for {@code realBase}
   */
  record Location(Path realBase, Path below) {}

  /** The service's own folder the copy is made in; out of every caller's reach. */
  private final SecureDirectoryStream<Path> workspace;

  /** The copy's name in {@link #workspace}. */
  private final Path copy;

  /** Where a missing folder is made before it is renamed into place: next to the copy. */
  private final Path scratch;

  /** The target as the caller named it, for errors. */
  private final String named;

  /** From the scope's real folder down to the target's parent, the last one. */
  private final List<SecureDirectoryStream<Path>> open = new ArrayList<>();

  private TargetFolder(SecureDirectoryStream<Path> workspace, Path copy, String named) {
    this.workspace = workspace;
    this.copy = copy.getFileName();
    this.scratch = scratchOf(copy);
    this.named = named;
  }

  /** The folder a fork making {@code copy} creates a missing parent in, for a moment. */
  static Path scratchOf(Path copy) {
    return copy.resolveSibling(copy.getFileName() + ".folder");
  }

  /**
   * Resolves where the folder above {@code target} is (the links of its existing part followed, the
   * missing part appended) and checks that it is inside the scope.
   *
   * @param named the target as the caller named it, for errors
   * @throws PathRefusedException when it leads outside the scope or through a link to nowhere
   */
  static Location locate(FileScope scope, Path target, String named) throws IOException {
    Path parent = target.getParent();
    Path existing = parent;
    while (existing != null && !Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) {
      existing = existing.getParent();
    }
    if (existing == null || !existing.startsWith(scope.base())) {
      throw changed(named);
    }
    Path realBase = scope.base().toRealPath();
    Path real;
    try {
      real = existing.toRealPath().resolve(existing.relativize(parent).toString());
    } catch (IOException e) {
      throw changed(named); // a link that leads nowhere, or a part removed meanwhile
    }
    if (!real.startsWith(realBase)) {
      throw new PathRefusedException("\"" + named + "\" leads outside your folder");
    }
    return new Location(realBase, realBase.relativize(real));
  }

  /**
   * Opens the folder at {@code location}, creating the folders that are missing. A new folder is
   * made next to {@code copy} in the service's own folder and renamed into place through the handle
   * of its parent, so no folder is ever created by a path a caller can redirect.
   *
   * @param copy the complete (or future) copy; its folder is the service's workspace
   * @param named the target as the caller named it, for errors
   * @throws PathRefusedException when a folder on the way is now a link or a file
   */
  static TargetFolder open(Location location, Path copy, String named) throws IOException {
    SecureDirectoryStream<Path> workspace =
        Handles.secure(Files.newDirectoryStream(copy.getParent()), "place a fork");
    TargetFolder folder = new TargetFolder(workspace, copy, named);
    try {
      SecureDirectoryStream<Path> current =
          Handles.secure(Files.newDirectoryStream(location.realBase()), "place a fork");
      folder.open.add(current);
      if (!location.below().toString().isEmpty()) {
        for (Path name : location.below()) {
          current = folder.child(current, name);
          folder.open.add(current);
        }
      }
      return folder;
    } catch (IOException | RuntimeException e) {
      try {
        folder.close();
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  /**
   * Renames the complete copy to {@code name} in this folder in one step. A name that exists by
   * now, even an empty folder (which a plain rename would silently replace), fails the fork and
   * stays as it is; the copy is left for the caller to remove.
   *
   * @throws ForkService.TargetExistsException when the name is taken
   */
  void place(Path name) throws IOException {
    SecureDirectoryStream<Path> folder = open.get(open.size() - 1);
    if (attributes(folder, name) != null) {
      throw new ForkService.TargetExistsException(named);
    }
    try {
      workspace.move(copy, folder, name);
    } catch (FileSystemException e) {
      if (attributes(folder, name) != null) {
        // Something took the name between the check and the rename: the rename refuses a file
        // or a folder with contents (ENOTDIR, ENOTEMPTY).
        throw new ForkService.TargetExistsException(named);
      }
      throw e;
    }
  }

  /**
   * Gives {@code name} in this folder the modification time {@code modified} again if it lost it,
   * never following a link: renaming a folder can touch its time on some file systems. Set only
   * when it differs, since a time set through a handle keeps microseconds, not nanoseconds.
   */
  void keepModified(Path name, FileTime modified) throws IOException {
    BasicFileAttributeView view =
        open.get(open.size() - 1)
            .getFileAttributeView(name, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS);
    if (!view.readAttributes().lastModifiedTime().equals(modified)) {
      view.setTimes(modified, null, null);
    }
  }

  /** Opens the folder {@code name} in {@code parent}, creating it when missing. */
  private SecureDirectoryStream<Path> child(SecureDirectoryStream<Path> parent, Path name)
      throws IOException {
    try {
      return parent.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS);
    } catch (NoSuchFileException missing) {
      create(parent, name);
    } catch (FileSystemException e) {
      throw refusalOr(e, parent, name);
    }
    try {
      return parent.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS);
    } catch (FileSystemException e) {
      throw refusalOr(e, parent, name);
    }
  }

  private void create(SecureDirectoryStream<Path> parent, Path name) throws IOException {
    Trees.delete(scratch); // left by an earlier attempt that crashed
    Files.createDirectory(scratch);
    try {
      // rename(2) refuses a link, a file and a full folder at the name; an empty folder made by
      // someone else in this instant is replaced by this one, which is empty too.
      workspace.move(scratch.getFileName(), parent, name);
    } catch (FileSystemException e) {
      Files.deleteIfExists(scratch);
      if (attributes(parent, name) == null) {
        throw e;
      }
      // Taken meanwhile: opening it decides whether it is a folder to use.
    }
  }

  /** A folder on the way that is now a link or a file is a refusal; anything else is {@code e}. */
  private IOException refusalOr(
      FileSystemException e, SecureDirectoryStream<Path> parent, Path name) throws IOException {
    BasicFileAttributes now = attributes(parent, name);
    if (now != null && !now.isDirectory()) {
      throw changed(named);
    }
    return e;
  }

  /** The attributes of {@code name} in {@code folder} itself, or null when nothing is there. */
  private static BasicFileAttributes attributes(SecureDirectoryStream<Path> folder, Path name)
      throws IOException {
    try {
      return Handles.attributes(folder, name);
    } catch (NoSuchFileException e) {
      return null;
    }
  }

  private static PathRefusedException changed(String named) {
    return new PathRefusedException(
        "\""
            + named
            + "\" changed while the fork was being placed: a folder on its way is now a link,"
            + " a file or gone; nothing was written through it");
  }

  @Override
  public void close() throws IOException {
    IOException failure = null;
    List<DirectoryStream<Path>> all = new ArrayList<>(open);
    all.add(workspace);
    for (DirectoryStream<Path> stream : all) {
      try {
        stream.close();
      } catch (IOException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }
}
