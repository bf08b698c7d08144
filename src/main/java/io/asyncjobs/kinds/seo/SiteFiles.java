package io.asyncjobs.kinds.seo;

import io.asyncjobs.files.FileScope;
import io.asyncjobs.files.PathRefusedException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The files of a site folder in a caller's scope, found without ever following a symbolic link out
 * of that scope: such links (and links that lead nowhere, or in a loop) are skipped and counted.
 * Links that stay inside the scope are followed, but every real file and folder is listed once: a
 * link to one already listed (a loop, or a fan of links to one folder) is not followed again, so
 * links cannot multiply the pages. A real file is listed under its own path in the site when it has
 * one; links are followed only once the real tree is listed. Shared by the {@code seo} and {@code
 * seo_meta} kinds.
 */
public final class SiteFiles {

  /** Largest page that is parsed; a bigger one is listed under {@link #tooLarge()}. */
  public static final long MAX_PAGE_BYTES = 16L << 20;

  /**
   * Most pages ({@code .html} and {@code .htm} files) one job lists; a site with more fails the
   * job, naming this limit, rather than be audited in part.
   */
  public static final int MAX_PAGES = 100_000;

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

  /** The site has more pages than {@link #MAX_PAGES}: the job fails with this. */
  public static final class TooManyPagesException extends IllegalStateException {

    TooManyPagesException(int max) {
      super(
          "the site has more than "
              + max
              + " pages, the most one job lists; audit a folder inside it instead");
    }
  }

  /** A folder or link met in the walk, with its path relative to the site. */
  private record Entry(Path path, String name) {}

  private final FileScope scope;
  private final int maxPages;
  private final List<Page> pages = new ArrayList<>();
  private final List<String> tooLarge = new ArrayList<>();

  /** Every file a site path names: the real ones and the links to files. */
  private final Set<String> files = new HashSet<>();

  /** The folders listed, by the path they were listed under. */
  private final Set<String> folders = new HashSet<>();

  /** Links to a folder listed under another path, and that path. */
  private final Map<String, String> aliases = new HashMap<>();

  /** The file keys of the folders listed, and the path each was listed under. */
  private final Map<Object, String> folderKeys = new HashMap<>();

  /** The file keys of the files listed. */
  private final Set<Object> fileKeys = new HashSet<>();

  private int linksSkipped;

  private SiteFiles(FileScope scope, int maxPages) {
    this.scope = scope;
    this.maxPages = maxPages;
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
   * @throws TooManyPagesException when the site has more than {@link #MAX_PAGES} pages
   * @throws InterruptedIOException when the thread is interrupted (the job timed out)
   */
  public static SiteFiles scan(FileScope scope, Path site) throws IOException {
    return scan(scope, site, MAX_PAGES);
  }

  /** {@link #scan(FileScope, Path)} with another page limit. */
  static SiteFiles scan(FileScope scope, Path site, int maxPages) throws IOException {
    SiteFiles found = new SiteFiles(scope, maxPages);
    found.walk(site);
    found.pages.sort(Comparator.comparing(Page::path));
    found.tooLarge.sort(Comparator.naturalOrder());
    return found;
  }

  /**
   * Lists the real tree under the site first, then follows the links found, in the order found,
   * each leading to a file or folder not listed yet; a folder reached so is listed the same way.
   * Each folder is listed once, so the work is bounded by the real files, whatever the links.
   */
  private void walk(Path site) throws IOException {
    Deque<Entry> links = new ArrayDeque<>();
    folderKeys.put(key(site, Files.readAttributes(site, BasicFileAttributes.class)), "");
    listTree(new Entry(site, ""), links);
    while (!links.isEmpty()) {
      checkInterrupted();
      follow(links.removeFirst(), links);
    }
  }

  /** Lists a tree without following a link: its links go to {@code links}, for later. */
  private void listTree(Entry top, Deque<Entry> links) throws IOException {
    Deque<Entry> todo = new ArrayDeque<>();
    todo.push(top);
    while (!todo.isEmpty()) {
      checkInterrupted();
      Entry folder = todo.pop();
      // Checked again as it is listed: a folder swapped for a link meanwhile must not lead out.
      if (!scope.contains(folder.path())) {
        linksSkipped++;
        continue;
      }
      folders.add(folder.name());
      for (Path path : sortedListing(folder.path())) {
        Entry entry = new Entry(path, join(folder.name(), path.getFileName().toString()));
        BasicFileAttributes attrs;
        try {
          attrs = Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException gone) {
          continue;
        }
        if (attrs.isSymbolicLink()) {
          links.addLast(entry);
        } else if (attrs.isDirectory()) {
          String listed = folderKeys.putIfAbsent(key(path, attrs), entry.name());
          if (listed == null) {
            todo.push(entry);
          } else {
            aliases.put(entry.name(), listed); // the same folder mounted twice
          }
        } else if (attrs.isRegularFile()) {
          addFile(entry, attrs);
        }
      }
    }
  }

  /** Follows one link: out of the scope, nowhere or to something listed, it is skipped. */
  private void follow(Entry link, Deque<Entry> links) throws IOException {
    // A link that leads nowhere or loops has no real path; contains() refuses it.
    if (!scope.contains(link.path())) {
      linksSkipped++;
      return;
    }
    BasicFileAttributes attrs;
    try {
      attrs = Files.readAttributes(link.path(), BasicFileAttributes.class);
    } catch (IOException gone) {
      linksSkipped++;
      return;
    }
    if (attrs.isDirectory()) {
      String listed = folderKeys.putIfAbsent(key(link.path(), attrs), link.name());
      if (listed == null) {
        listTree(link, links);
      } else {
        aliases.put(link.name(), listed);
        linksSkipped++;
      }
    } else if (attrs.isRegularFile() && !addFile(link, attrs)) {
      linksSkipped++;
    }
  }

  /**
   * Records a file under its site path; the first path of a real file also lists it as a page.
   *
   * @return whether the file was not listed before
   */
  private boolean addFile(Entry file, BasicFileAttributes attrs) throws IOException {
    files.add(file.name());
    if (!fileKeys.add(key(file.path(), attrs))) {
      return false;
    }
    if (isPage(file.path().getFileName().toString())) {
      if (pages.size() + tooLarge.size() >= maxPages) {
        throw new TooManyPagesException(maxPages);
      }
      if (attrs.size() > MAX_PAGE_BYTES) {
        tooLarge.add(file.name());
      } else {
        pages.add(
            new Page(file.name(), file.path(), attrs.size(), attrs.lastModifiedTime().toInstant()));
      }
    }
    return true;
  }

  /** What tells two paths to one file or folder apart: its file key, or its real path. */
  private static Object key(Path path, BasicFileAttributes attrs) throws IOException {
    return attrs.fileKey() != null ? attrs.fileKey() : path.toRealPath();
  }

  private static List<Path> sortedListing(Path folder) throws IOException {
    List<Path> entries = new ArrayList<>();
    try (DirectoryStream<Path> listing = Files.newDirectoryStream(folder)) {
      listing.forEach(entries::add);
    } catch (NoSuchFileException | NotDirectoryException gone) {
      return List.of(); // removed or replaced since it was found
    }
    entries.sort(Comparator.comparing(p -> p.getFileName().toString()));
    return entries;
  }

  private static String join(String folder, String name) {
    return folder.isEmpty() ? name : folder + "/" + name;
  }

  private static void checkInterrupted() throws InterruptedIOException {
    if (Thread.currentThread().isInterrupted()) {
      throw new InterruptedIOException("interrupted while listing the site");
    }
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

  /** Links skipped: leading out of the scope, nowhere, in a loop, or to a file or folder listed. */
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
    path = throughAliases(path);
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

  /**
   * {@code path} with a leading part that is a link to a folder listed under another path replaced
   * by that path, as often as it takes: each replacement ends in a listed folder, so the next one
   * is further along the path.
   */
  private String throughAliases(String path) {
    if (aliases.isEmpty()) {
      return path;
    }
    for (int steps = path.split("/", -1).length; steps > 0; steps--) {
      String replaced = null;
      for (int end = path.indexOf('/'); replaced == null; end = path.indexOf('/', end + 1)) {
        String prefix = end < 0 ? path : path.substring(0, end);
        String listed = aliases.get(prefix);
        if (listed != null) {
          String rest = end < 0 ? "" : path.substring(end + 1);
          replaced =
              listed.isEmpty() ? rest : rest.isEmpty() && end < 0 ? listed : listed + "/" + rest;
        }
        if (end < 0) {
          break;
        }
      }
      if (replaced == null) {
        return path;
      }
      path = replaced;
    }
    return path;
  }
}
