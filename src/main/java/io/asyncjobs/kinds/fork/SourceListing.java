package io.asyncjobs.kinds.fork;

import io.asyncjobs.files.FileScope;
import io.asyncjobs.files.PathRefusedException;
import java.io.Closeable;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotLinkException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.function.Supplier;

/**
 * What a fork copies, found in one walk of the source: every folder, regular file and link in it.
 * The walk starts at the caller's real folder and goes down one level at a time through directory
 * handles that never follow a link, so what it lists is really inside the source, whatever links
 * the tree holds or gains meanwhile. The source's handle stays open until {@link #close}: the copy
 * reaches every folder again from it the same way ({@link #openFolder}), never by a path.
 */
final class SourceListing implements Closeable {

  /**
   * A folder of the source, listed before what it holds.
   *
   * @param relative where it is in the source; the empty path for the source itself
   * @param attributes its own attributes, read through its handle when it was listed
   */
  record Folder(Path relative, PosixFileAttributes attributes) {}

  /**
   * A regular file as listed.
   *
   * @param folder the index of its folder in {@link #folders()}
   * @param name its name in that folder
   * @param size its size when listed: what the progress counts on
   */
  record Item(int folder, Path name, long size) {}

  /**
   * A link as listed.
   *
   * @param relative where it is in the source
   * @param text what it says, as it says it
   * @param attributes the link's own attributes (its times)
   */
  record Link(Path relative, Path text, PosixFileAttributes attributes) {}

  private final SecureDirectoryStream<Path> source;
  private final Path real;
  private final String named;
  private final List<Folder> folders = new ArrayList<>();
  private final List<Item> files = new ArrayList<>();
  private final List<Link> links = new ArrayList<>();
  private long bytes;
  private long skippedLinks;
  private long skippedOther;

  private SourceListing(SecureDirectoryStream<Path> source, Path real, String named) {
    this.source = source;
    this.real = real;
    this.named = named;
  }

  /**
   * Opens the source folder from the scope's real folder without following a link and lists it. A
   * link in the source is listed when it leads somewhere inside the scope from where it is; any
   * other link, and anything neither a folder, a regular file nor a link, is only counted.
   *
   * @param real the source folder's real location, after every link on its way
   * @param named the source as the caller named it, for errors
   * @throws PathRefusedException when the source now leads outside the scope, or a folder on its
   *     way became a link or a file
   * @throws InterruptedIOException when the thread is interrupted
   */
  static SourceListing of(FileScope scope, Path real, String named) throws IOException {
    Path realBase = scope.base().toRealPath();
    if (!real.startsWith(realBase)) {
      throw new PathRefusedException("\"" + named + "\" leads outside your folder");
    }
    SecureDirectoryStream<Path> current;
    try (SecureDirectoryStream<Path> base =
        Handles.secure(Files.newDirectoryStream(realBase), "fork a folder")) {
      current = descend(base, realBase.relativize(real), () -> named);
    }
    SourceListing listing = new SourceListing(current, real, named);
    try {
      listing.walk(scope);
    } catch (IOException | RuntimeException e) {
      close(listing, e);
      throw e;
    }
    return listing;
  }

  /** The source's real location, where the names of files in errors start. */
  Path real() {
    return real;
  }

  /** Every folder, the source first, each before the folders it holds. */
  List<Folder> folders() {
    return folders;
  }

  /** Every regular file, folder by folder in the order of {@link #folders()}. */
  List<Item> files() {
    return files;
  }

  /** The links that lead inside the scope from where they are in the source. */
  List<Link> links() {
    return links;
  }

  /** The size of every listed file together. */
  long bytes() {
    return bytes;
  }

  /** Links left out: they lead out of the scope, or nowhere. */
  long skippedLinks() {
    return skippedLinks;
  }

  /** Sockets, pipes and devices left out. */
  long skippedOther() {
    return skippedOther;
  }

  /**
   * Opens the folder at {@code relative} in the source, one level at a time without following a
   * link, as {@link #of} opened the source. The caller closes it.
   *
   * @throws PathRefusedException when a folder on the way is now a link, a file or anything else
   * @throws NoSuchFileException when a folder on the way was removed
   */
  SecureDirectoryStream<Path> openFolder(Path relative) throws IOException {
    return descend(source, relative, () -> shown(relative));
  }

  /** {@code relative} as the caller names it: under the source's name. */
  String shown(Path relative) {
    String tail = relative.toString();
    return tail.isEmpty() ? named : named + "/" + tail;
  }

  /** Lists every folder once, depth first; at most one open handle per level. */
  private void walk(FileScope scope) throws IOException {
    record Open(int folder, SecureDirectoryStream<Path> handle, Iterator<Path> subfolders) {}
    Deque<Open> open = new ArrayDeque<>();
    try {
      Path top = real.getFileSystem().getPath("");
      try {
        open.push(new Open(0, source, list(scope, top, source).iterator()));
      } catch (FileSystemException e) {
        throw at(e, real);
      }
      while (!open.isEmpty()) {
        Handles.checkInterrupted();
        Open current = open.peek();
        if (!current.subfolders().hasNext()) {
          open.pop();
          if (current.handle() != source) {
            current.handle().close();
          }
          continue;
        }
        Path name = current.subfolders().next();
        Path relative = folders.get(current.folder()).relative().resolve(name);
        SecureDirectoryStream<Path> handle;
        try {
          handle = folder(current.handle(), name, () -> shown(relative));
        } catch (NoSuchFileException removed) {
          continue; // removed since its folder was read
        } catch (FileSystemException e) {
          throw at(e, real.resolve(relative));
        }
        int index = folders.size();
        try {
          open.push(new Open(index, handle, list(scope, relative, handle).iterator()));
        } catch (FileSystemException e) {
          close(handle, e);
          throw at(e, real.resolve(relative));
        } catch (IOException | RuntimeException e) {
          close(handle, e);
          throw e;
        }
      }
    } finally {
      for (Open left : open) {
        if (left.handle() != source) {
          left.handle().close();
        }
      }
    }
  }

  /** Records the folder {@code handle} and what it holds; returns the names of its subfolders. */
  private List<Path> list(FileScope scope, Path relative, SecureDirectoryStream<Path> handle)
      throws IOException {
    int index = folders.size();
    folders.add(
        new Folder(
            relative, handle.getFileAttributeView(PosixFileAttributeView.class).readAttributes()));
    List<Path> subfolders = new ArrayList<>();
    try {
      for (Path entry : handle) {
        Path name = entry.getFileName();
        PosixFileAttributes attributes;
        try {
          attributes =
              handle
                  .getFileAttributeView(
                      name, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                  .readAttributes();
        } catch (NoSuchFileException removed) {
          continue;
        }
        if (attributes.isDirectory()) {
          subfolders.add(name);
        } else if (attributes.isRegularFile()) {
          files.add(new Item(index, name, attributes.size()));
          bytes += attributes.size();
        } else if (attributes.isSymbolicLink()) {
          link(scope, relative.resolve(name), attributes);
        } else {
          skippedOther++;
        }
      }
    } catch (DirectoryIteratorException e) {
      throw e.getCause();
    }
    return subfolders;
  }

  /** Lists a link that leads inside the scope from its place in the source; counts any other. */
  private void link(FileScope scope, Path relative, PosixFileAttributes attributes)
      throws IOException {
    Path path = real.resolve(relative);
    if (!scope.contains(path)) {
      skippedLinks++; // leads out of the caller's folder, or nowhere
      return;
    }
    try {
      links.add(new Link(relative, Files.readSymbolicLink(path), attributes));
    } catch (NoSuchFileException | NotLinkException changed) {
      skippedLinks++; // removed or replaced since it was listed
    }
  }

  /** Opens a new handle of the folder {@code relative} below {@code start}, level by level. */
  private static SecureDirectoryStream<Path> descend(
      SecureDirectoryStream<Path> start, Path relative, Supplier<String> shown) throws IOException {
    if (relative.toString().isEmpty()) {
      return start.newDirectoryStream(
          relative.getFileSystem().getPath("."), LinkOption.NOFOLLOW_LINKS);
    }
    SecureDirectoryStream<Path> current = null;
    try {
      for (Path name : relative) {
        SecureDirectoryStream<Path> child = folder(current == null ? start : current, name, shown);
        if (current != null) {
          current.close();
        }
        current = child;
      }
      return current;
    } catch (IOException | RuntimeException e) {
      if (current != null) {
        close(current, e);
      }
      throw e;
    }
  }

  /** Opens the folder {@code name} in {@code parent}, refusing anything that is not a folder. */
  private static SecureDirectoryStream<Path> folder(
      SecureDirectoryStream<Path> parent, Path name, Supplier<String> shown) throws IOException {
    // Checked first, so a pipe put in a folder's place is refused instead of blocking the open.
    PosixFileAttributes now = Handles.attributes(parent, name);
    if (!now.isDirectory()) {
      throw changed(shown.get());
    }
    try {
      return parent.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS);
    } catch (NoSuchFileException e) {
      throw e;
    } catch (FileSystemException e) {
      throw changed(shown.get()); // ELOOP or ENOTDIR: swapped since the check
    }
  }

  /**
   * {@code e} as if it had named {@code where}: a handle's own errors name only the last part of
   * the path, and the caller is shown its own name of the whole. One that names a whole path
   * already (the copy's side) is left as it is.
   */
  static FileSystemException at(FileSystemException e, Path where) {
    if (e.getFile() != null && Path.of(e.getFile()).isAbsolute()) {
      return e;
    }
    String reason = e.getReason() != null ? e.getReason() : e.getClass().getSimpleName();
    FileSystemException named = new FileSystemException(where.toString(), null, reason);
    named.initCause(e);
    return named;
  }

  private static PathRefusedException changed(String shown) {
    return new PathRefusedException(
        "\""
            + shown
            + "\" changed while the fork was reading it: a folder on its way is now a link or a"
            + " file; nothing was read through it");
  }

  private static void close(Closeable closeable, Exception failure) {
    try {
      closeable.close();
    } catch (IOException suppressed) {
      failure.addSuppressed(suppressed);
    }
  }

  @Override
  public void close() throws IOException {
    source.close();
  }
}
