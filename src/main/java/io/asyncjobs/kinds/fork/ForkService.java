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
import io.asyncjobs.storage.VolumeSpace;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
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
 * meanwhile fails the fork instead of leading it out of the caller's folder. The source is listed
 * once ({@link SourceListing}) and read only through directory handles that never follow a link
 * either; the files are copied a few at a time ({@link TreeCopy}). Files keep their modification
 * times and permissions, folders too (set once their contents are in place), links their times. A
 * link inside the source is copied as a link when it leads somewhere inside the caller's folder,
 * from the copy as from the source; any other link is skipped and counted. Sockets, pipes and
 * devices are skipped and counted.
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

  private final FileScopes scopes;

  private final DataDirectory data;

  /**
   * The moments a fork acts on a part of the tree it checked or listed before: a test's way to
   * change the tree right then.
   */
  enum Step {
    /** Right before the folders above the target are created. */
    CREATE_PARENTS,
    /** Right after the source is listed, before anything of it is copied. */
    COPY,
    /** Right before the complete copy is renamed to the target. */
    RENAME
  }

  /** Something that runs at each {@link Step}: a test's way to change the tree at that moment. */
  interface StepWatcher {
    void before(Step step) throws IOException;
  }

  private volatile StepWatcher watcher = step -> {};

  /** How the room left on the volume is measured; a test's seam. */
  private volatile VolumeSpace.Measure space = VolumeSpace.FILE_STORE;

  /**
   * What a file or folder takes on the volume beyond its bytes, at most: the rest of its last block
   * (4 KiB on the usual file systems).
   */
  static final long BLOCK = 4096;

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
        """
        {"type": "object", "required": ["source", "target"], "additionalProperties": false,
         "properties": {
           "source": {"type": "string", "minLength": 1, "maxLength": %1$d, "pattern": "%2$s",
                      "description": "a folder of your tree"},
           "target": {"type": "string", "minLength": 1, "maxLength": %1$d, "pattern": "%2$s",
                      "description": "the new folder; it must not exist"}}}"""
            .formatted(MAX_PATH, Payloads.NOT_BLANK),
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

  /**
   * Measures the room left on the volume with {@code measure}; the file store's figure for null.
   */
  void measureSpaceWith(VolumeSpace.Measure measure) {
    this.space = measure == null ? VolumeSpace.FILE_STORE : measure;
  }

  /** Where a job copies before the rename: the service's own folder, named after the job. */
  Path temporary(UUID uid) {
    return data.root().resolve("tmp").resolve(KIND).resolve(uid.toString());
  }

  @Override
  protected Map<String, Object> process(Job job) throws Exception {
    FileScope scope = scopes.forJob(job);
    String source = (String) job.payload.get("source");
    String target = (String) job.payload.get("target");
    Plan plan = plan(scope, source, target);
    Path tgt = plan.target();
    Path temp = temporary(job.uid);
    Path from = plan.source();
    Map<String, Object> result;
    long free = 0;
    try {
      // The source may itself be a link (inside the scope): what it leads to is copied.
      from = plan.source().toRealPath();
      removeTree(temp); // left by an earlier attempt that crashed
      Files.createDirectories(temp.getParent());
      free = space.usable(temp.getParent());
      // The folders above the target are made before the copy, so a fork that cannot be placed
      // fails early; checked again first: a part may have become a link since the plan.
      TargetFolder.Location parent = TargetFolder.locate(scope, tgt, target);
      watcher.before(Step.CREATE_PARENTS);
      TargetFolder.open(parent, temp, target).close();
      try {
        Copied copied = copy(scope, from, source, tgt, temp, free);
        result = copied.result();
        parent = TargetFolder.locate(scope, tgt, target);
        watcher.before(Step.RENAME);
        // Placed through handles of the folders above the target: a folder that became a link
        // since it was located refuses the fork instead of leading it elsewhere.
        try (TargetFolder folder = TargetFolder.open(parent, temp, target)) {
          folder.place(tgt.getFileName());
          try {
            folder.keepModified(tgt.getFileName(), copied.rootModified());
          } catch (IOException e) {
            // The fork is complete; a time that could not be set again does not undo it.
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
      throw VolumeSpace.orFilledUp(
          new IOException(describe(e, from, source, temp, target), e), free);
    } catch (IOException e) {
      throw VolumeSpace.orFilledUp(e, free);
    }
    reportProgress(1.0, (Long) result.get("files"));
    return result;
  }

  /**
   * A complete copy in the temporary folder.
   *
   * @param result the job's result
   * @param rootModified the source folder's modification time, for the copy once renamed
   */
  private record Copied(Map<String, Object> result, FileTime rootModified) {}

  /**
   * Lists the source once, judges its links, and copies it to {@code temp}, on up to {@link
   * TreeCopy#MAX_THREADS} threads.
   *
   * @param from the source's real location
   */
  private Copied copy(FileScope scope, Path from, String source, Path tgt, Path temp, long free)
      throws IOException {
    try (SourceListing listing = SourceListing.of(scope, from, source)) {
      // A copy that cannot fit fails before a byte of it is written.
      VolumeSpace.require(needed(listing), free, true);
      // Judged before any link is made, so one that would lead out is never written.
      List<SourceListing.Link> kept =
          new CopyLinks(realLocation(tgt), scope.base().toRealPath()).keep(listing.links());
      watcher.before(Step.COPY);
      TreeCopy copy =
          new TreeCopy(
              listing, kept, temp, (bytes, files) -> reportCopyProgress(listing, bytes, files));
      copy.run(Math.min(TreeCopy.MAX_THREADS, Runtime.getRuntime().availableProcessors()));
      Map<String, Object> result = new LinkedHashMap<>();
      result.put("target", scope.nameOf(tgt));
      result.put("files", copy.files());
      result.put("folders", (long) listing.folders().size());
      result.put("links", (long) kept.size());
      result.put("bytes", copy.bytes());
      result.put("skipped_links", listing.skippedLinks() + listing.links().size() - kept.size());
      result.put("skipped_other", listing.skippedOther());
      result.put("item_count", copy.files());
      result.put("bytes_in", copy.bytes());
      result.put("bytes_out", copy.bytes());
      return new Copied(result, listing.folders().get(0).attributes().lastModifiedTime());
    }
  }

  /** What the copy takes on the volume: each file's bytes up to whole blocks, a block a folder. */
  private static long needed(SourceListing listing) {
    long needed = (long) listing.folders().size() * BLOCK;
    for (SourceListing.Item file : listing.files()) {
      needed += (file.size() + BLOCK - 1) / BLOCK * BLOCK;
    }
    return needed;
  }

  private void reportCopyProgress(SourceListing listing, long bytes, long files) {
    double fraction =
        listing.bytes() > 0
            ? (double) bytes / listing.bytes()
            : listing.files().isEmpty() ? 0 : (double) files / listing.files().size();
    reportProgress(Math.min(1.0, fraction), files);
  }

  /**
   * Where {@code path}, which need not exist, really is: its deepest existing part after every
   * link, and the rest of it as named (those folders are made as plain folders).
   */
  private static Path realLocation(Path path) throws IOException {
    Path existing = path;
    while (!Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) {
      existing = existing.getParent();
    }
    return existing.toRealPath().resolve(existing.relativize(path).toString());
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
