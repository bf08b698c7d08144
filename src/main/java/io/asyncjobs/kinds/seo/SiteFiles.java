package io.asyncjobs.kinds.seo;

import io.asyncjobs.files.FileScope;
import io.asyncjobs.files.PathRefusedException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.nio.file.FileSystemLoopException;
import java.nio.file.FileVisitOption;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The files of a site folder in a caller's scope, found without ever following a symbolic link out
 * of that scope: such links (and links that lead nowhere, or in a loop) are skipped and counted.
 * Links that stay inside the scope are followed. Shared by the {@code seo} and {@code seo_meta}
 * kinds.
 */
public final class SiteFiles {

  /** Largest page that is parsed; a bigger one is listed under {@link #tooLarge()}. */
  public static final long MAX_PAGE_BYTES = 16L << 20;

  /** The payload key naming the site folder, relative to the caller's folder. */
  public static final String SITE = "site";

  /** Longest {@code site} a payload may name. */
  public static final int MAX_SITE_LENGTH = 4096;

  /**
   * One HTML page of the site.
   *
   * @param path relative to the site folder, with {@code /} separators
   * @param file where it was found (under the site folder, possibly through a link)
   * @param size its size in bytes
   * @param modified its modification time
   */
  public record Page(String path, Path file, long size, Instant modified) {}

  private final FileScope scope;
  private final List<Page> pages = new ArrayList<>();
  private final List<String> tooLarge = new ArrayList<>();
  private final Set<String> files = new HashSet<>();
  private final Set<String> folders = new HashSet<>();
  private int linksSkipped;

  private SiteFiles(FileScope scope) {
    this.scope = scope;
  }

  /**
   * Resolves the {@code site} a payload names inside the scope and requires a folder there.
   *
   * @throws PathRefusedException when the path leaves the scope (also through a link)
   * @throws IllegalArgumentException when it is missing, not a string, absent or not a folder
   */
  public static Path requireSite(FileScope scope, Map<String, Object> payload) {
    Object value = payload.get(SITE);
    if (value == null) {
      throw new IllegalArgumentException(
          "site is required: the folder of HTML pages, relative to your folder");
    }
    if (!(value instanceof String name) || name.isBlank() || name.length() > MAX_SITE_LENGTH) {
      throw new IllegalArgumentException(
          "site must be a non-empty string of at most " + MAX_SITE_LENGTH + " characters");
    }
    Path site = scope.resolve(name);
    if (!Files.exists(site)) {
      throw new IllegalArgumentException("site \"" + shown(name) + "\" does not exist");
    }
    if (!Files.isDirectory(site)) {
      throw new IllegalArgumentException("site \"" + shown(name) + "\" is not a folder");
    }
    return site;
  }

  /** A download name for an artifact of the site: its last path segment and {@code suffix}. */
  public static String preferredName(Map<String, Object> payload, String suffix) {
    String name = String.valueOf(payload.get(SITE)).replace('\\', '/');
    while (name.endsWith("/") || name.endsWith("/.")) {
      name = name.substring(0, name.length() - (name.endsWith("/") ? 1 : 2));
    }
    String last = name.substring(name.lastIndexOf('/') + 1);
    if (last.isBlank() || last.equals(".") || last.equals("..") || last.length() > 200) {
      last = "site";
    }
    return last + suffix;
  }

  private static String shown(String name) {
    return name.length() > 80 ? name.substring(0, 80) + "..." : name;
  }

  /** Whether a file name is an HTML page: it ends with {@code .html} or {@code .htm}. */
  public static boolean isPage(String name) {
    String lower = name.toLowerCase(Locale.ROOT);
    return lower.endsWith(".html") || lower.endsWith(".htm");
  }

  /**
   * Lists the site folder {@code site} (resolved in {@code scope}), pages sorted by path.
   *
   * @throws InterruptedIOException when the thread is interrupted (the job timed out)
   */
  public static SiteFiles scan(FileScope scope, Path site) throws IOException {
    SiteFiles found = new SiteFiles(scope);
    found.walk(site);
    found.pages.sort(Comparator.comparing(Page::path));
    found.tooLarge.sort(Comparator.naturalOrder());
    return found;
  }

  private void walk(Path site) throws IOException {
    Files.walkFileTree(
        site,
        EnumSet.of(FileVisitOption.FOLLOW_LINKS),
        Integer.MAX_VALUE,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs)
              throws IOException {
            checkInterrupted();
            if (!scope.contains(dir)) {
              linksSkipped++;
              return FileVisitResult.SKIP_SUBTREE;
            }
            folders.add(relative(site, dir));
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
              throws IOException {
            checkInterrupted();
            // A link that leads nowhere arrives with its own attributes; contains() refuses it.
            if (!scope.contains(file)) {
              linksSkipped++;
              return FileVisitResult.CONTINUE;
            }
            if (!attrs.isRegularFile()) {
              return FileVisitResult.CONTINUE;
            }
            String path = relative(site, file);
            files.add(path);
            if (isPage(file.getFileName().toString())) {
              if (attrs.size() > MAX_PAGE_BYTES) {
                tooLarge.add(path);
              } else {
                pages.add(new Page(path, file, attrs.size(), attrs.lastModifiedTime().toInstant()));
              }
            }
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
            if (e instanceof FileSystemLoopException) {
              linksSkipped++;
              return FileVisitResult.CONTINUE;
            }
            throw e;
          }
        });
  }

  private static void checkInterrupted() throws InterruptedIOException {
    if (Thread.currentThread().isInterrupted()) {
      throw new InterruptedIOException("interrupted while listing the site");
    }
  }

  private static String relative(Path site, Path path) {
    String name = site.relativize(path).toString();
    return path.getFileSystem().getSeparator().equals("/")
        ? name
        : name.replace(path.getFileSystem().getSeparator(), "/");
  }

  /**
   * Reads a page, checking once more that its real location is inside the scope (the tree can
   * change while the job runs).
   *
   * @return its bytes, or null when it now leads out of the scope or is gone
   */
  public byte[] read(Page page) throws IOException {
    // openRead resolves the real location, checks it is inside the scope and opens it there.
    try (InputStream in = scope.openInputStream(page.file())) {
      return in.readNBytes((int) MAX_PAGE_BYTES + 1);
    } catch (PathRefusedException | NoSuchFileException e) {
      return null; // gone, turned into a link out, or into something other than a file
    }
  }

  /** The HTML pages, sorted by path. */
  public List<Page> pages() {
    return pages;
  }

  /** Pages over {@link #MAX_PAGE_BYTES}, which are not parsed. */
  public List<String> tooLarge() {
    return tooLarge;
  }

  /** Links skipped: leading out of the scope, nowhere, or in a loop. */
  public int linksSkipped() {
    return linksSkipped;
  }

  /**
   * The existing file a site path names: the file itself, or for a folder its {@code index.html}
   * (or {@code index.htm}).
   *
   * @return the file's path relative to the site, or null when nothing is there
   */
  public String lookup(String path) {
    if (!path.isEmpty() && !path.endsWith("/")) {
      if (files.contains(path)) {
        return path;
      }
      if (!folders.contains(path)) {
        return null;
      }
      path = path + "/";
    }
    for (String index : List.of("index.html", "index.htm")) {
      if (files.contains(path + index)) {
        return path + index;
      }
    }
    return null;
  }
}
