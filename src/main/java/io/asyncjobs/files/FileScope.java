package io.asyncjobs.files;

import io.asyncjobs.queue.Owner;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The part of the data directory one caller may name: {@code files/<owner kind>/<owner id>/} for a
 * caller, all of {@code files/} for an admin. Every path a payload names is resolved here, at
 * enqueue and again in {@code process} (the tree can change in between): it must stay inside the
 * scope after normalization and after following every symbolic link on the way.
 *
 * @param root the data directory, absolute and normalized
 * @param relative the scope relative to {@code root}: {@code files} or {@code files/<kind>/<id>}
 */
public record FileScope(Path root, String relative) {

  /** Where callers' inputs live, relative to the data directory. */
  public static final String FILES = "files";

  /** The payload key under which an enqueue endpoint records the scope for {@code process}. */
  public static final String PAYLOAD_KEY = "scope";

  private static final Pattern PLAIN_SEGMENT = Pattern.compile("[A-Za-z0-9._@+-]{1,200}");

  /**
   * The scope of an ordinary caller: its own folder, {@code files/<kind>/<id>}. Jobs are kept apart
   * by kind and id, and so are folders: {@code user:alice} and {@code service:alice} have one each.
   * Each part is one {@link #segment}, so no two owners share a folder.
   */
  public static FileScope ofOwner(Path root, Owner owner) {
    return new FileScope(root, FILES + "/" + segment(owner.kind()) + "/" + segment(owner.id()));
  }

  /** The scope of an admin: everything under {@code files/}. */
  public static FileScope ofAdmin(Path root) {
    return new FileScope(root, FILES);
  }

  /**
   * The scope an enqueue endpoint stored in a payload.
   *
   * @throws PathRefusedException when the payload holds no scope or one outside {@code files/}
   */
  public static FileScope fromPayload(Path root, Object stored) {
    if (!(stored instanceof String text)
        || !(text.equals(FILES) || text.startsWith(FILES + "/"))
        || text.endsWith("/")
        || java.util.Arrays.stream(text.split("/", -1))
            .anyMatch(part -> part.isEmpty() || part.equals(".") || part.equals(".."))) {
      throw new PathRefusedException("the job names no valid file scope: " + stored);
    }
    return new FileScope(root, text);
  }

  /**
   * The folder name an owner kind or id gets: the text itself when it is a plain name, otherwise
   * its UTF-8 bytes percent-encoded, so none can name {@code .}, {@code ..} or a nested path, and
   * two different texts never get the same name.
   */
  public static String segment(String part) {
    if (PLAIN_SEGMENT.matcher(part).matches() && !part.equals(".") && !part.equals("..")) {
      return part;
    }
    StringBuilder out = new StringBuilder();
    for (byte b : part.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-') {
        out.append((char) c);
      } else {
        out.append('%').append(String.format("%02X", c));
      }
    }
    return out.toString();
  }

  /** The scope's folder, absolute. */
  public Path base() {
    return root.resolve(relative);
  }

  /** Creates the scope's folder when missing (a caller's first use). */
  public Path ensureBase() {
    try {
      return Files.createDirectories(base());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create " + base(), e);
    }
  }

  /**
   * Resolves a path a caller named, relative to the scope. The result is normalized and inside the
   * scope; when it (or a parent) exists, the real location, after every symbolic link, is inside
   * the scope's real location too. The path need not exist.
   *
   * @throws PathRefusedException naming the problem: absolute, empty, a NUL, or outside the scope
   */
  public Path resolve(String path) {
    if (path == null || path.isBlank()) {
      throw new PathRefusedException("a path must not be empty");
    }
    if (path.indexOf('\u0000') >= 0) {
      throw new PathRefusedException("a path must not contain U+0000");
    }
    if (path.startsWith("/")) {
      throw new PathRefusedException(
          "paths are relative to your folder; " + quote(path) + " is absolute");
    }
    Path base = base();
    Path resolved;
    try {
      resolved = base.resolve(path).normalize();
    } catch (InvalidPathException e) {
      throw new PathRefusedException("not a valid path: " + quote(path));
    }
    if (!resolved.startsWith(base)) {
      throw new PathRefusedException(quote(path) + " leads outside your folder");
    }
    requireRealLocationInside(resolved, path);
    return resolved;
  }

  /**
   * Whether {@code path} (absolute) is, after following its links, inside the scope. Used while
   * walking a tree, where a link found on the way must not lead out.
   */
  public boolean contains(Path path) {
    try {
      Path realBase = base().toRealPath();
      return path.toRealPath().startsWith(realBase);
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * Opens a file for reading only if it is, at the moment of opening, a regular file inside the
   * scope. The links on its way are resolved first and checked; then the real path is walked one
   * folder at a time relative to open directory handles, never following a link, so a folder or
   * file swapped for a link (or a named pipe) after the job listed the tree cannot redirect the
   * read to another owner's files or block it.
   *
   * @throws PathRefusedException when the file now leads outside, is no regular file, or changed
   *     while it was being opened
   */
  public SeekableByteChannel openRead(Path path) throws IOException {
    SeekableByteChannel direct = openWithoutLinks(path);
    return direct != null ? direct : openThroughLinks(path);
  }

  /**
   * {@link #openRead} for the usual file, reached through no link: the path as named is walked one
   * folder at a time from the scope, never following a link, without resolving each part of it
   * first (two fewer walks of the path through the file system). Null when a link (or anything but
   * a plain folder) stands on the way, or the path is not plainly below the scope: then {@link
   * #openThroughLinks} decides.
   */
  private SeekableByteChannel openWithoutLinks(Path path) throws IOException {
    if (!path.isAbsolute() || !path.startsWith(base()) || path.equals(base())) {
      return null;
    }
    Path relative = base().relativize(path);
    for (Path part : relative) {
      if (part.toString().equals(".") || part.toString().equals("..")) {
        return null;
      }
    }
    try (DirectoryStream<Path> top = Files.newDirectoryStream(base())) {
      return top instanceof SecureDirectoryStream<Path> folder
          ? openBelow(folder, relative, path)
          : null;
    }
  }

  /**
   * {@link #openRead} the long way: the links on the way resolved and checked, then the real path
   * walked without following any.
   */
  private SeekableByteChannel openThroughLinks(Path path) throws IOException {
    Path realBase = base().toRealPath();
    Path real;
    try {
      real = path.toRealPath();
    } catch (NoSuchFileException e) {
      throw e;
    } catch (IOException e) {
      throw new PathRefusedException(quote(nameOf(path)) + " cannot be resolved");
    }
    if (!real.startsWith(realBase) || real.equals(realBase)) {
      throw new PathRefusedException(quote(nameOf(path)) + " leads outside your folder (a link)");
    }
    try (DirectoryStream<Path> top = Files.newDirectoryStream(realBase)) {
      if (!(top instanceof SecureDirectoryStream<Path> folder)) {
        // No openat on this file system: check, then open without following the last link.
        requireRegular(
            Files.readAttributes(real, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS), path);
        return Files.newByteChannel(real, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
      }
      SeekableByteChannel channel = openBelow(folder, realBase.relativize(real), path);
      if (channel == null) {
        // A part of the real path became a link or a file while we walked it.
        throw new PathRefusedException(quote(nameOf(path)) + " changed while it was being read");
      }
      return channel;
    }
  }

  /**
   * Opens {@code relative} below {@code top} one folder at a time through open handles, never
   * following a link: each folder on the way is looked at before it is opened (opening a named pipe
   * as a folder would wait for a writer forever), the file must be a regular one. Null when a link,
   * or anything but a folder where one is needed, stands on the way.
   *
   * @param named the path the caller named, for the refusal's message
   * @throws PathRefusedException when the file is neither a regular file nor a link
   */
  private SeekableByteChannel openBelow(SecureDirectoryStream<Path> top, Path relative, Path named)
      throws IOException {
    List<DirectoryStream<Path>> open = new ArrayList<>();
    try {
      SecureDirectoryStream<Path> folder = top;
      for (int i = 0; i < relative.getNameCount() - 1; i++) {
        Path part = relative.getName(i);
        if (!attributesOf(folder, part).isDirectory()) {
          return null;
        }
        folder = folder.newDirectoryStream(part, LinkOption.NOFOLLOW_LINKS);
        open.add(folder);
      }
      Path name = relative.getFileName();
      BasicFileAttributes attributes = attributesOf(folder, name);
      if (attributes.isSymbolicLink()) {
        return null;
      }
      requireRegular(attributes, named);
      return folder.newByteChannel(
          name, Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS));
    } catch (NoSuchFileException e) {
      throw e;
    } catch (FileSystemException e) {
      return null; // ELOOP or ENOTDIR: a part became a link or a file since it was looked at
    } finally {
      for (DirectoryStream<Path> stream : open) {
        stream.close();
      }
    }
  }

  private static BasicFileAttributes attributesOf(SecureDirectoryStream<Path> folder, Path name)
      throws IOException {
    return folder
        .getFileAttributeView(name, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
        .readAttributes();
  }

  /** {@link #openRead} as a stream. */
  public InputStream openInputStream(Path path) throws IOException {
    return Channels.newInputStream(openRead(path));
  }

  private void requireRegular(BasicFileAttributes attributes, Path path) {
    if (!attributes.isRegularFile()) {
      throw new PathRefusedException(quote(nameOf(path)) + " is no longer a regular file");
    }
  }

  /** {@code path} (inside the scope) as the caller names it: relative to the scope. */
  public String nameOf(Path path) {
    return base().relativize(path).toString();
  }

  private void requireRealLocationInside(Path resolved, String named) {
    if (!Files.exists(base(), LinkOption.NOFOLLOW_LINKS)) {
      // The caller has no folder yet: nothing below it exists, so no link can lead out. Checking
      // does not create it (a refused request writes nothing).
      return;
    }
    Path realBase;
    try {
      realBase = base().toRealPath();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot resolve " + base(), e);
    }
    // The deepest part that exists decides where the rest would land.
    Path existing = resolved;
    while (existing != null && !Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) {
      existing = existing.getParent();
    }
    if (existing == null) {
      throw new PathRefusedException(quote(named) + " leads outside your folder");
    }
    try {
      if (!existing.toRealPath().startsWith(realBase)) {
        throw new PathRefusedException(quote(named) + " leads outside your folder (a link)");
      }
    } catch (IOException e) {
      // A dangling link: its target cannot be checked, so it is refused.
      throw new PathRefusedException(quote(named) + " is a link that leads nowhere");
    }
  }

  private static String quote(String path) {
    String shown = path.length() > 80 ? path.substring(0, 80) + "..." : path;
    return "\"" + shown.replaceAll("\\p{Cntrl}", "?") + "\"";
  }
}
