package io.asyncjobs.kinds.fork;

import io.asyncjobs.api.PayloadCheck;
import io.asyncjobs.engine.JobService;
import io.asyncjobs.files.FileScope;
import io.asyncjobs.files.FileScopes;
import io.asyncjobs.files.PathRefusedException;
import io.asyncjobs.files.Payloads;
import io.asyncjobs.files.Trees;
import io.asyncjobs.problem.ProblemException;
import io.asyncjobs.queue.Job;
import io.asyncjobs.storage.DataDirectory;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystemException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The {@code fork} kind: copies a folder of the caller's tree to a new folder in the same tree.
 *
 * <p>The copy is made in the service's own folder ({@code tmp/fork/<uid>/}, out of every caller's
 * reach) and renamed to the target in one step when complete, so the target either does not exist
 * or holds the whole copy. The folders above the target are created and the rename is made through
 * directory handles that never follow a link ({@link TargetFolder}), so a folder swapped for a link
 * meanwhile fails the fork instead of leading it out of the caller's folder. Files keep their
 * modification times and permissions, folders too (set once their contents are in place). A link
 * inside the source is copied as a link when it leads somewhere inside the caller's folder, from
 * the copy as from the source; any other link is skipped and counted. Sockets, pipes and devices
 * are skipped and counted.
 *
 * <p>The fork is durable: it is the caller's folder, not an artifact. When the job expires, {@link
 * #cleanup} removes only a temporary folder that a failed or interrupted fork left behind; the
 * finished target is never touched.
 */
@ApplicationScoped
public class ForkService extends JobService implements PayloadCheck {

  /** This kind's name. */
  public static final String KIND = "fork";

  /** The payload keys a caller may send. */
  static final Set<String> KEYS = Set.of("source", "target");

  /** Longest path a payload may name. */
  static final int MAX_PATH = 4096;

  /** Bytes copied between two checks for interruption and two progress reports. */
  private static final long CHUNK = 8L << 20;

  private final FileScopes scopes;

  private final DataDirectory data;

  /** The two moments a fork acts on the folders above its target, right after checking them. */
  enum Step {
    /** Right before the folders above the target are created. */
    CREATE_PARENTS,
    /** Right before the complete copy is renamed to the target. */
    RENAME
  }

  /** Something that runs at each {@link Step}: a test's way to change the tree at that moment. */
  interface StepWatcher {
    void before(Step step) throws IOException;
  }

  private volatile StepWatcher watcher = step -> {};

  ForkService(FileScopes scopes, DataDirectory data) {
    this.scopes = scopes;
    this.data = data;
  }

  @Override
  public String kind() {
    return KIND;
  }

  @Override
  public String title() {
    return "Folder fork (copy)";
  }

  @Override
  public RouteDoc routeDoc() {
    return new RouteDoc(
        "Enqueue a folder fork",
        """
        Copies a folder of your tree to a new folder (times and permissions kept), under a \
        temporary name first and renamed when complete. The new folder is yours to keep: it \
        outlives the job. Answers 202 with Location at once.""",
        "fork",
        "{\"source\": \"site\", \"target\": \"drafts/site-2\"}",
        Map.of("409", "The target exists (type target-exists)"));
  }

  /**
   * Known keys only, and a {@link #plan} that holds now: a source folder in the caller's scope, a
   * target that does not exist yet (a 409 {@code target-exists} when it does).
   */
  @Override
  public Accepted check(FileScope scope, Map<String, Object> body) {
    Payloads.allowOnly(body, KEYS);
    String source = Payloads.string(body, "source", MAX_PATH);
    String target = Payloads.string(body, "target", MAX_PATH);
    try {
      plan(scope, source, target);
    } catch (TargetExistsException e) {
      throw ProblemException.conflict("target-exists", "Target exists", e.getMessage());
    }
    return Accepted.files(body, null);
  }

  /** The target exists: a 409 at enqueue, a failed job in {@code process}. */
  public static class TargetExistsException extends IllegalStateException {

    /** The target, as the caller named it, exists. */
    public TargetExistsException(String target) {
      super("the target \"" + target + "\" already exists; a fork never replaces anything");
    }
  }

  /**
   * The two folders of a fork, resolved in the caller's scope and checked.
   *
   * @param source the folder to copy
   * @param target the folder to create
   */
  public record Plan(Path source, Path target) {}

  /**
   * Resolves and checks a fork's folders, at enqueue and again in {@code process}: the source is an
   * existing folder, the target does not exist, is not the source or inside it (also through a
   * link), and its nearest existing parent is a folder, so the missing ones can be created.
   *
   * @throws PathRefusedException when a path is absolute, malformed or leads outside the scope
   * @throws IllegalArgumentException naming any other problem
   * @throws TargetExistsException when the target exists
   */
  public static Plan plan(FileScope scope, String source, String target) {
    Path src = scope.resolve(source);
    if (!Files.isDirectory(src)) {
      throw new IllegalArgumentException(
          "source must name an existing folder in your tree; \""
              + source
              + (Files.exists(src) ? "\" is not a folder" : "\" does not exist"));
    }
    Path tgt = scope.resolve(target);
    Path existing = tgt;
    while (!Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) {
      existing =
          existing.getParent(); // resolve() has checked that a parent inside the scope exists
    }
    try {
      Path realSource = src.toRealPath();
      Path realTarget = existing.toRealPath().resolve(existing.relativize(tgt).toString());
      if (tgt.startsWith(src) || realTarget.startsWith(realSource)) {
        throw new IllegalArgumentException(
            "the target \""
                + target
                + "\" is the source or inside it; fork to a new folder elsewhere");
      }
    } catch (IOException e) {
      throw new IllegalArgumentException(
          "\"" + source + "\" or \"" + target + "\" changed while being checked; try again");
    }
    if (existing.equals(tgt)) {
      throw new TargetExistsException(target);
    }
    if (!Files.isDirectory(existing)) {
      throw new IllegalArgumentException(
          "the target \""
              + target
              + "\" cannot be created: \""
              + scope.nameOf(existing)
              + "\" is a file");
    }
    return new Plan(src, tgt);
  }

  /** Sets what runs at each {@link Step}; a test's seam, a no-op otherwise. */
  void watchSteps(StepWatcher watcher) {
    this.watcher = watcher == null ? step -> {} : watcher;
  }

  /** Where a job copies before the rename: the service's own folder, named after the job. */
  Path temporary(UUID uid) {
    return data.root().resolve("tmp").resolve(KIND).resolve(uid.toString());
  }

  /** What the copy did so far. */
  private static final class Copy {
    long totalBytes;
    long totalFiles;
    long bytes;
    long files;
    long folders;
    long links;
    long skippedLinks;
    long skippedOther;
    FileTime rootModified;
    final List<Path> copiedLinks = new ArrayList<>();
  }

  @Override
  protected Map<String, Object> process(Job job) throws Exception {
    FileScope scope = scopes.forJob(job);
    String source = (String) job.payload.get("source");
    String target = (String) job.payload.get("target");
    Plan plan = plan(scope, source, target);
    Path src = plan.source();
    Path tgt = plan.target();
    Path temp = temporary(job.uid);
    Path from = src;
    Copy copy = new Copy();
    try {
      // The source may itself be a link (inside the scope): copy what it leads to.
      from = Files.isSymbolicLink(src) ? src.toRealPath() : src;
      removeTree(temp); // left by an earlier attempt that crashed
      Files.createDirectories(temp.getParent());
      // The folders above the target are made before the copy, so a fork that cannot be placed
      // fails early; checked again first: a part may have become a link since the plan.
      TargetFolder.Location parent = TargetFolder.locate(scope, tgt, target);
      watcher.before(Step.CREATE_PARENTS);
      TargetFolder.open(parent, temp, target).close();
      try {
        measure(from, copy);
        copyTree(scope, from, temp, copy);
        dropLinksLeadingOut(scope, temp, tgt, copy);
        parent = TargetFolder.locate(scope, tgt, target);
        watcher.before(Step.RENAME);
        // Placed through handles of the folders above the target: a folder that became a link
        // since it was located refuses the fork instead of leading it elsewhere.
        try (TargetFolder folder = TargetFolder.open(parent, temp, target)) {
          folder.place(tgt.getFileName());
          if (copy.rootModified != null) {
            // Renaming can touch the folder's own time on some file systems; set it once more.
            try {
              folder.setModified(tgt.getFileName(), copy.rootModified);
            } catch (IOException e) {
              // The fork is complete; a time that could not be set again does not undo it.
            }
          }
        }
      } catch (Throwable e) {
        try {
          removeTree(temp);
        } catch (IOException | RuntimeException suppressed) {
          e.addSuppressed(suppressed);
        }
        throw e;
      }
    } catch (FileSystemException e) {
      // Its message holds absolute paths; the caller sees its own names instead.
      throw new IOException(describe(e, from, source, temp, target), e);
    }
    reportProgress(1.0, copy.files);

    Map<String, Object> result = new LinkedHashMap<>();
    result.put("target", scope.nameOf(tgt));
    result.put("files", copy.files);
    result.put("folders", copy.folders);
    result.put("links", copy.links);
    result.put("bytes", copy.bytes);
    result.put("skipped_links", copy.skippedLinks);
    result.put("skipped_other", copy.skippedOther);
    result.put("item_count", copy.files);
    result.put("bytes_in", copy.bytes);
    result.put("bytes_out", copy.bytes);
    return result;
  }

  /** Counts the files and bytes to copy, for the progress fraction. */
  private static void measure(Path from, Copy copy) throws IOException {
    Files.walkFileTree(
        from,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs)
              throws IOException {
            checkInterrupted();
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
            if (attrs.isRegularFile()) {
              copy.totalFiles++;
              copy.totalBytes += attrs.size();
            }
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFileFailed(Path file, IOException e) {
            return FileVisitResult.CONTINUE; // the copy itself reports what it cannot read
          }
        });
  }

  /** Copies {@code from} to {@code temp}, which must not exist, never following a link. */
  private void copyTree(FileScope scope, Path from, Path temp, Copy copy) throws IOException {
    Files.walkFileTree(
        from,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs)
              throws IOException {
            checkInterrupted();
            Files.createDirectory(temp.resolve(from.relativize(dir)));
            copy.folders++;
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
              throws IOException {
            Path dest = temp.resolve(from.relativize(file));
            if (attrs.isSymbolicLink()) {
              if (scope.contains(file)) {
                Files.createSymbolicLink(dest, Files.readSymbolicLink(file));
                copy.copiedLinks.add(dest);
                copy.links++;
              } else {
                copy.skippedLinks++; // leads out of the caller's folder, or nowhere
              }
            } else if (attrs.isRegularFile()) {
              copyFile(scope, file, dest, attrs, copy);
            } else {
              copy.skippedOther++;
            }
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
            if (e instanceof NoSuchFileException) {
              return FileVisitResult.CONTINUE; // removed while we copy
            }
            throw e;
          }

          @Override
          public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
            if (e != null) {
              throw e;
            }
            Path dest = temp.resolve(from.relativize(dir));
            BasicFileAttributes attrs =
                Files.readAttributes(dir, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            copyAttributes(dir, dest, attrs);
            if (dir.equals(from)) {
              copy.rootModified = attrs.lastModifiedTime();
            }
            return FileVisitResult.CONTINUE;
          }
        });
  }

  /** Copies one file in chunks, so a long copy can be interrupted and reports its progress. */
  private void copyFile(FileScope scope, Path file, Path dest, BasicFileAttributes attrs, Copy copy)
      throws IOException {
    try (SeekableByteChannel source = scope.openRead(file);
        FileChannel out =
            FileChannel.open(dest, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      if (!(source instanceof FileChannel in)) {
        throw new IOException("this file system cannot copy " + file.getFileName());
      }
      long size = in.size();
      long position = 0;
      while (position < size) {
        checkInterrupted();
        long moved = in.transferTo(position, Math.min(CHUNK, size - position), out);
        if (moved <= 0) {
          break; // the file shrank while we copied it
        }
        position += moved;
        copy.bytes += moved;
        reportCopyProgress(copy);
      }
    }
    copyAttributes(file, dest, attrs);
    copy.files++;
    reportCopyProgress(copy);
  }

  private void reportCopyProgress(Copy copy) {
    double fraction =
        copy.totalBytes > 0
            ? (double) copy.bytes / copy.totalBytes
            : copy.totalFiles > 0 ? (double) copy.files / copy.totalFiles : 0;
    reportProgress(Math.min(1.0, fraction), copy.files);
  }

  /** Gives {@code dest} the permissions and times of {@code source}. */
  private static void copyAttributes(Path source, Path dest, BasicFileAttributes attrs)
      throws IOException {
    PosixFileAttributeView posix =
        Files.getFileAttributeView(source, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS);
    if (posix != null) {
      Files.setPosixFilePermissions(dest, posix.readAttributes().permissions());
    }
    Files.getFileAttributeView(dest, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
        .setTimes(attrs.lastModifiedTime(), attrs.lastAccessTime(), null);
  }

  /**
   * A relative link can lead elsewhere from the copy than from the source. Once everything is in
   * place, each copied link must still lead inside the caller's folder; one that does not (or leads
   * nowhere) is removed and counted as skipped.
   */
  private static void dropLinksLeadingOut(FileScope scope, Path temp, Path tgt, Copy copy)
      throws IOException {
    for (Path link : copy.copiedLinks) {
      // Judged from where the link will be once the copy is renamed to the target.
      Path finalPlace = tgt.resolve(temp.relativize(link));
      Path leadsTo = finalPlace.getParent().resolve(Files.readSymbolicLink(link)).normalize();
      if (!leadsTo.startsWith(scope.base()) || !scope.contains(existingPart(leadsTo))) {
        Files.delete(link);
        copy.links--;
        copy.skippedLinks++;
      }
    }
  }

  /** The deepest existing part of {@code path}: where a link to a missing file would land. */
  private static Path existingPart(Path path) {
    Path existing = path;
    while (existing != null && !Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) {
      existing = existing.getParent();
    }
    return existing == null ? path : existing;
  }

  /**
   * The message of a failed file operation, with the paths as the caller names them: never where
   * the data directory sits on the volume.
   */
  private static String describe(
      FileSystemException e, Path from, String source, Path temp, String target) {
    String what = e.getReason() != null ? e.getReason() : e.getClass().getSimpleName();
    String file =
        e.getFile() == null ? null : shown(Path.of(e.getFile()), from, source, temp, target);
    return file == null ? "the copy failed: " + what : "the copy failed at " + file + ": " + what;
  }

  private static String shown(Path path, Path from, String source, Path temp, String target) {
    if (path.startsWith(temp)) {
      return join(target, temp.relativize(path));
    }
    if (path.startsWith(from)) {
      return join(source, from.relativize(path));
    }
    return path.getFileName() == null ? "?" : path.getFileName().toString();
  }

  private static String join(String base, Path rest) {
    String tail = rest.toString();
    return tail.isEmpty() ? base : base + "/" + tail;
  }

  private static void checkInterrupted() throws IOException {
    if (Thread.currentThread().isInterrupted()) {
      throw new InterruptedIOException("the fork was stopped");
    }
  }

  /**
   * Removes what a failed or interrupted fork left: its temporary folder under {@code tmp/fork/}.
   * The target itself, the durable result of a finished fork, is never removed.
   */
  @Override
  protected void cleanup(Job job) throws IOException {
    // The copy is built in the service's own folder, out of every caller's reach; a finished
    // fork renamed it away, so only a failed or crashed fork leaves it.
    removeTree(temporary(job.uid));
    removeTree(TargetFolder.scratchOf(temporary(job.uid)));
  }

  /**
   * Deletes a temporary copy, first giving its owner access to each folder in it: a copied
   * read-only folder could not be emptied otherwise. Links are removed, never followed.
   */
  static void removeTree(Path root) throws IOException {
    if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    makeOwnerAccessible(root);
    Trees.delete(root);
  }

  private static final Set<PosixFilePermission> OWNER_ALL =
      Set.of(
          PosixFilePermission.OWNER_READ,
          PosixFilePermission.OWNER_WRITE,
          PosixFilePermission.OWNER_EXECUTE);

  private static void makeOwnerAccessible(Path dir) throws IOException {
    if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    PosixFileAttributeView view =
        Files.getFileAttributeView(dir, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS);
    if (view != null) {
      Set<PosixFilePermission> permissions = new HashSet<>(view.readAttributes().permissions());
      if (permissions.addAll(OWNER_ALL)) {
        view.setPermissions(permissions);
      }
    }
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      for (Path entry : entries) {
        makeOwnerAccessible(entry);
      }
    }
  }
}
