package io.asyncjobs.kinds.zip;

import io.asyncjobs.api.PayloadCheck;
import io.asyncjobs.engine.Checkpoint;
import io.asyncjobs.engine.JobService;
import io.asyncjobs.files.Artifacts;
import io.asyncjobs.files.FileScope;
import io.asyncjobs.files.FileScopes;
import io.asyncjobs.files.PathRefusedException;
import io.asyncjobs.files.Payloads;
import io.asyncjobs.files.ZipEntryNames;
import io.asyncjobs.queue.Job;
import io.asyncjobs.storage.VolumeSpace;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.commons.compress.archivers.zip.ParallelScatterZipCreator;
import org.apache.commons.compress.archivers.zip.Zip64Mode;
import org.apache.commons.compress.archivers.zip.ZipArchiveEntry;
import org.apache.commons.compress.archivers.zip.ZipArchiveOutputStream;
import org.apache.commons.compress.parallel.FileBasedScatterGatherBackingStore;
import org.apache.commons.compress.parallel.InputStreamSupplier;
import org.jboss.logging.Logger;

/**
 * {@code zip}: one archive of the files and folders a caller names. Entries are deflated in
 * parallel (Commons Compress's scatter/gather creator, one worker per core), each worker spilling
 * to a temporary file in the job's artifact folder, so memory stays bounded whatever the input
 * size. Files whose type is already compressed are stored, not deflated. Empty folders are kept.
 */
@ApplicationScoped
public class ZipService extends JobService implements PayloadCheck {

  /** This kind's name. */
  public static final String KIND = "zip";

  /** Most paths one archive may name. */
  static final int MAX_PATHS = 1000;

  /** How long a failed or finished attempt waits for its compression workers to stop. */
  static final Duration WORKERS_STOP = Duration.ofSeconds(30);

  private static final Logger LOG = Logger.getLogger(ZipService.class);

  /** Compression level when the payload names none, as {@code zip -6}. */
  static final int DEFAULT_LEVEL = 6;

  private static final Set<String> FIELDS = Set.of("paths", "name", "level");

  /** Bytes an entry takes in the archive beside its content, at the least: its two headers. */
  static final long ENTRY_OVERHEAD = 100;

  /** The archive's file name inside the job's artifact folder. */
  static final String ARCHIVE = "archive.zip";

  /** Extensions whose content is already compressed: deflating them again only costs time. */
  static final Set<String> STORED_TYPES =
      Set.of(
          "zip", "jar", "war", "apk", "docx", "xlsx", "pptx", "odt", "epub", "gz", "tgz", "bz2",
          "xz", "zst", "lz4", "7z", "rar", "jpg", "jpeg", "png", "gif", "webp", "heic", "avif",
          "mp4", "m4v", "mov", "mkv", "webm", "avi", "mp3", "m4a", "aac", "ogg", "opus", "flac",
          "woff", "woff2");

  private final FileScopes scopes;
  private final Artifacts artifacts;

  /** Where a test runs something half-way through an attempt. */
  private volatile Checkpoint halfWritten = Checkpoint.NONE;

  /** How the room left on the volume is measured; a test's seam. */
  private volatile VolumeSpace.Measure space = VolumeSpace.FILE_STORE;

  ZipService(FileScopes scopes, Artifacts artifacts) {
    this.scopes = scopes;
    this.artifacts = artifacts;
  }

  /**
   * Sets what runs once an attempt has written its stored entries and its workers have deflated the
   * others, right before it assembles the archive: a test's way to run another attempt meanwhile.
   */
  void whenHalfWritten(Checkpoint hook) {
    this.halfWritten = Checkpoint.orNone(hook);
  }

  /**
   * Measures the room left on the volume with {@code measure}; the file store's figure for null.
   */
  void measureSpaceWith(VolumeSpace.Measure measure) {
    this.space = measure == null ? VolumeSpace.FILE_STORE : measure;
  }

  @Override
  public String kind() {
    return KIND;
  }

  @Override
  public String title() {
    return "Zip archives";
  }

  @Override
  public RouteDoc routeDoc() {
    return new RouteDoc(
        "Enqueue a zip archive",
        """
        One zip of the named files and folders (recursive, empty folders kept), relative to \
        the caller's folder files/<owner kind>/<sub>/. Already-compressed types are stored.""",
        "two folders",
        "{\"paths\": [\"photos/2026\", \"notes.md\"], \"name\": \"backup.zip\"}",
        """
        {"type": "object", "required": ["paths"], "additionalProperties": false,
         "properties": {
           "paths": {"type": "array", "minItems": 1, "maxItems": %d,
                     "items": {"type": "string", "minLength": 1, "pattern": "%s"},
                     "description": "files and folders relative to your folder"},
           "name": {"type": "string", "minLength": 1, "maxLength": 200, "pattern": "^[^/\\\\\\\\]+$",
                    "description": "the download's file name, without folders"},
           "level": {"type": "integer", "minimum": 0, "maximum": 9,
                     "description": "deflate level (default 6)"}}}"""
            .formatted(MAX_PATHS, Payloads.NOT_BLANK),
        Map.of());
  }

  /**
   * Known fields only; 1 to {@value #MAX_PATHS} paths, each existing in the caller's scope; a file
   * name without folders; a level from 0 to 9.
   */
  @Override
  public Accepted check(FileScope scope, Map<String, Object> body) {
    Payloads.allowOnly(body, FIELDS);
    List<String> paths = Payloads.strings(body, "paths", 1, MAX_PATHS);
    for (String path : paths) {
      if (!Files.exists(scope.resolve(path), LinkOption.NOFOLLOW_LINKS)) {
        throw new IllegalArgumentException("no file or folder \"" + path + "\" in your folder");
      }
    }
    String name = Payloads.optionalString(body, "name", 200).orElse(null);
    if (name != null && (name.contains("/") || name.contains("\\"))) {
      throw new IllegalArgumentException("name is a file name, without folders");
    }
    Map<String, Object> payload = new LinkedHashMap<>();
    payload.put("paths", paths);
    payload.put("level", Payloads.optionalInt(body, "level", 0, 9).orElse(DEFAULT_LEVEL));
    String download = name == null ? "archive.zip" : name.endsWith(".zip") ? name : name + ".zip";
    return Accepted.files(payload, download);
  }

  @Override
  protected Map<String, Object> process(Job job) throws Exception {
    FileScope scope = scopes.forJob(job);
    List<String> named = Payloads.strings(job.payload, "paths", 1, MAX_PATHS);
    int level = Payloads.optionalInt(job.payload, "level", 0, 9).orElse(DEFAULT_LEVEL);

    Plan plan = new Plan(scope);
    for (String name : named) {
      Path path = scope.resolve(name);
      if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
        throw new PathRefusedException("\"" + name + "\" no longer exists");
      }
      plan.add(path);
    }

    // Measured before anything is written: an archive that cannot fit fails at once. Only the
    // stored entries' size is known beforehand (the deflated ones may shrink to next to nothing),
    // so that is the bound; the spill files come on top while the archive is assembled.
    long free = space.usable(artifacts.location(KIND, job.uid));
    VolumeSpace.require(plan.storedBytes + plan.files.size() * ENTRY_OVERHEAD, free, false);
    Path folder = artifacts.folder(KIND, job.uid);
    Path target = folder.resolve(ARCHIVE);
    // This attempt's own files: another attempt of the job (an old owner still writing, say) may
    // be writing its own in the same folder, and must find them as it left them.
    Path partial = Artifacts.partial(target);
    List<Path> spills = new java.util.concurrent.CopyOnWriteArrayList<>();
    AtomicLong bytesRead = new AtomicLong();
    int threads = Math.max(1, Runtime.getRuntime().availableProcessors());
    ExecutorService workers = Executors.newFixedThreadPool(threads, r -> daemon(r, job));
    try {
      write(plan, partial, folder, spills, level, workers, bytesRead);
      Artifacts.publish(partial, target);
    } catch (Exception e) {
      throw VolumeSpace.orFilledUp(e, free);
    } finally {
      workers.shutdownNow();
      // A worker may still be opening its spill file when this attempt fails (the stored entries
      // are copied here while the workers start): the files are listed once every worker is done,
      // or one made after the list was read is left behind.
      awaitQuietly(workers);
      Files.deleteIfExists(partial);
      for (Path spill : spills) {
        Files.deleteIfExists(spill);
      }
    }
    reportProgress(1.0, (long) plan.files.size());

    Map<String, Object> result = new HashMap<>();
    result.put(RESULT_FILE, artifacts.relative(target));
    result.put("files", plan.files.size());
    result.put("folders", plan.directories.size());
    result.put("skipped_links", plan.skippedLinks);
    result.put("item_count", plan.files.size());
    result.put("bytes_in", bytesRead.get());
    result.put("bytes_out", Files.size(target));
    return result;
  }

  /**
   * Writes the archive: folders first, then the stored entries copied by this thread while the
   * workers deflate the others into their scatter files, then the deflated entries.
   */
  private void write(
      Plan plan,
      Path partial,
      Path folder,
      List<Path> spills,
      int level,
      ExecutorService workers,
      AtomicLong bytesRead)
      throws Exception {
    try (ZipArchiveOutputStream out = new ZipArchiveOutputStream(partial)) {
      out.setUseZip64(Zip64Mode.AsNeeded);
      // Each worker's spill file; closed here whatever happens (the creator closes them only when
      // it gets as far as writeTo).
      List<FileBasedScatterGatherBackingStore> stores =
          new java.util.concurrent.CopyOnWriteArrayList<>();
      ParallelScatterZipCreator creator =
          new ParallelScatterZipCreator(
              workers,
              () -> {
                Path spill = Files.createTempFile(folder, "scatter-", ".tmp");
                spills.add(spill);
                FileBasedScatterGatherBackingStore store =
                    new FileBasedScatterGatherBackingStore(spill);
                stores.add(store);
                return store;
              },
              level);
      try {
        fill(plan, out, creator, workers, bytesRead);
      } finally {
        for (FileBasedScatterGatherBackingStore store : stores) {
          try {
            store.close();
          } catch (IOException e) {
            // already closed by writeTo, or gone with the folder: nothing left to release
          }
        }
      }
    }
  }

  /** Adds every entry: folders, stored files copied here, deflated ones through the creator. */
  private void fill(
      Plan plan,
      ZipArchiveOutputStream out,
      ParallelScatterZipCreator creator,
      ExecutorService workers,
      AtomicLong bytesRead)
      throws Exception {
    List<Map.Entry<String, Path>> stored = new ArrayList<>();
    for (Map.Entry<String, Path> file : plan.files.entrySet()) {
      if (storedType(file.getKey())) {
        stored.add(file);
      } else {
        ZipArchiveEntry entry = entry(file.getKey(), file.getValue(), ZipArchiveEntry.DEFLATED);
        creator.addArchiveEntry(entry, counting(plan.scope, file.getValue(), bytesRead));
      }
    }
    for (String directory : plan.directories) {
      ZipArchiveEntry entry = new ZipArchiveEntry(directory);
      entry.setUnixMode(040755);
      out.putArchiveEntry(entry);
      out.closeArchiveEntry();
    }
    // While the workers deflate, this thread copies the stored entries straight into the
    // archive (the file is seekable, so their sizes and checksums are patched in afterwards).
    byte[] buffer = new byte[1 << 16];
    for (Map.Entry<String, Path> file : stored) {
      out.putArchiveEntry(entry(file.getKey(), file.getValue(), ZipArchiveEntry.STORED));
      try (InputStream in = plan.scope.openInputStream(file.getValue())) {
        for (int n; (n = in.read(buffer)) > 0; ) {
          out.write(buffer, 0, n);
          bytesRead.addAndGet(n);
        }
      }
      out.closeArchiveEntry();
      if (Thread.interrupted()) {
        throw new InterruptedException("zip interrupted");
      }
      reportProgress(plan.progress(bytesRead.get()), null);
    }
    workers.shutdown();
    while (!workers.awaitTermination(200, TimeUnit.MILLISECONDS)) {
      reportProgress(plan.progress(bytesRead.get()), null);
    }
    halfWritten.reached();
    creator.writeTo(out);
    out.finish();
  }

  /** Waits for the workers to end, keeping an interrupt for the caller to see. */
  private static void awaitQuietly(ExecutorService workers) {
    try {
      if (!workers.awaitTermination(WORKERS_STOP.toMillis(), TimeUnit.MILLISECONDS)) {
        LOG.warnf("zip workers still running %s after the job ended", WORKERS_STOP);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  protected void cleanup(Job job) throws IOException {
    artifacts.remove(KIND, job.uid);
  }

  private static ZipArchiveEntry entry(String name, Path file, int method) throws IOException {
    BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class);
    ZipArchiveEntry entry = new ZipArchiveEntry(name);
    entry.setSize(attributes.size());
    entry.setLastModifiedTime(attributes.lastModifiedTime());
    entry.setUnixMode(0100644);
    entry.setMethod(method);
    return entry;
  }

  /** The entry name of a file: its name relative to the scope, as {@link ZipEntryNames} says. */
  static String entryName(String relative) {
    return ZipEntryNames.of(relative);
  }

  /** Whether a file of this name is stored rather than deflated. */
  static boolean storedType(String name) {
    int dot = name.lastIndexOf('.');
    return dot >= 0 && STORED_TYPES.contains(name.substring(dot + 1).toLowerCase(Locale.ROOT));
  }

  private static InputStreamSupplier counting(FileScope scope, Path file, AtomicLong bytesRead) {
    return () -> {
      try {
        return new java.io.FilterInputStream(scope.openInputStream(file)) {
          @Override
          public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
              bytesRead.incrementAndGet();
            }
            return b;
          }

          @Override
          public int read(byte[] buffer, int offset, int length) throws IOException {
            int n = super.read(buffer, offset, length);
            if (n > 0) {
              bytesRead.addAndGet(n);
            }
            return n;
          }
        };
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    };
  }

  private static Thread daemon(Runnable r, Job job) {
    Thread t = new Thread(r, "zip-" + job.uid);
    t.setDaemon(true);
    return t;
  }

  /**
   * What goes into the archive: entry names (as the caller names the paths, folders with a trailing
   * slash) in walk order, each once. Links that lead out of the caller's scope, and links to
   * folders, are skipped and counted.
   */
  private static final class Plan {
    final FileScope scope;
    final Map<String, Path> files = new LinkedHashMap<>();
    final List<String> directories = new ArrayList<>();
    final Set<String> seenDirectories = new java.util.HashSet<>();
    long totalBytes;
    long storedBytes;
    int skippedLinks;

    Double progress(long read) {
      return totalBytes == 0 ? null : Math.min(1.0, (double) read / totalBytes);
    }

    Plan(FileScope scope) {
      this.scope = scope;
    }

    void add(Path start) throws IOException {
      Files.walkFileTree(
          start,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
              String name = entryName(scope.nameOf(dir)) + "/";
              if (!name.equals("/") && seenDirectories.add(name)) {
                directories.add(name);
              }
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
                throws IOException {
              if (Thread.currentThread().isInterrupted()) {
                throw new java.io.InterruptedIOException("listing interrupted");
              }
              if (attrs.isSymbolicLink()) {
                if (!scope.contains(file) || !Files.isRegularFile(file)) {
                  skippedLinks++;
                  return FileVisitResult.CONTINUE;
                }
              } else if (!attrs.isRegularFile()) {
                return FileVisitResult.CONTINUE;
              }
              String name = entryName(scope.nameOf(file));
              if (files.putIfAbsent(name, file) == null) {
                long size = Files.size(file);
                totalBytes += size;
                if (storedType(name)) {
                  storedBytes += size;
                }
              }
              return FileVisitResult.CONTINUE;
            }
          });
    }
  }
}
