package io.asyncjobs.kinds.fork;

import io.asyncjobs.files.PathRefusedException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Copies a {@link SourceListing} into a fork's temporary folder: the folders first, then the files
 * on a few threads at once, then the links, then each folder's permissions and times (children
 * before parents, so a read-only folder is made read-only only once it is full).
 *
 * <p>Each file is read through its folder's handle ({@link SourceListing#openFolder}), checked to
 * be a regular file right before it is opened without following a link, and copied in the kernel
 * ({@link FileChannel#transferTo}) in chunks: between two chunks the job's thread checks for an
 * interrupt and reports progress, and the helpers check whether to stop. The copy returns only once
 * every helper has returned, so nothing writes into the temporary folder after it.
 */
final class TreeCopy {

  /** Bytes copied between two checks for interruption and two progress reports. */
  private static final long CHUNK = 8L << 20;

  /** Most files and bytes one thread takes at a time: a share of one folder's files. */
  private static final int UNIT_FILES = 32;

  private static final long UNIT_BYTES = 32L << 20;

  /** Threads that copy at once, the job's own included, at most. */
  static final int MAX_THREADS = 4;

  private static final Set<OpenOption> OPEN_READ =
      Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);

  /** Where the copy reports how far it got; called on the job's thread only. */
  interface Progress {
    void report(long bytes, long files);
  }

  /** Files {@code [from, to)} of the listing, all in one folder: one thread's share at a time. */
  private record Unit(int folder, int from, int to) {}

  private final SourceListing source;
  private final List<SourceListing.Link> links;
  private final Path temp;
  private final Progress progress;
  private final List<Unit> units = new ArrayList<>();
  private final AtomicInteger nextUnit = new AtomicInteger();
  private final AtomicLong bytes = new AtomicLong();
  private final AtomicLong files = new AtomicLong();
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private volatile boolean stopping;

  /**
   * @param links the links to make: those of the listing that were judged to stay inside
   * @param temp where the copy is made; must not exist, its parent must
   * @param progress called on the job's thread now and then while files are copied
   */
  TreeCopy(SourceListing source, List<SourceListing.Link> links, Path temp, Progress progress) {
    this.source = source;
    this.links = links;
    this.temp = temp;
    this.progress = progress;
    List<SourceListing.Item> all = source.files();
    int from = 0;
    long unitBytes = 0;
    for (int i = 0; i < all.size(); i++) {
      SourceListing.Item item = all.get(i);
      if (i > from
          && (item.folder() != all.get(from).folder()
              || i - from == UNIT_FILES
              || unitBytes >= UNIT_BYTES)) {
        units.add(new Unit(all.get(from).folder(), from, i));
        from = i;
        unitBytes = 0;
      }
      unitBytes += item.size();
    }
    if (from < all.size()) {
      units.add(new Unit(all.get(from).folder(), from, all.size()));
    }
  }

  /** Bytes copied so far. */
  long bytes() {
    return bytes.get();
  }

  /** Files copied so far. */
  long files() {
    return files.get();
  }

  /**
   * Makes the copy, on the calling thread and up to {@code threads - 1} helpers.
   *
   * @throws InterruptedIOException when the calling thread is interrupted
   * @throws PathRefusedException when a listed file or folder is now something else
   */
  void run(int threads) throws IOException {
    List<SourceListing.Folder> folders = source.folders();
    for (SourceListing.Folder folder : folders) {
      Handles.checkInterrupted();
      Files.createDirectory(temp.resolve(folder.relative()));
    }
    copyFiles(Math.max(1, Math.min(threads, units.size())));
    for (SourceListing.Link link : links) {
      Handles.checkInterrupted();
      Path made = Files.createSymbolicLink(temp.resolve(link.relative()), link.text());
      setTimes(made, link.attributes(), LinkOption.NOFOLLOW_LINKS);
    }
    for (int i = folders.size() - 1; i >= 0; i--) {
      SourceListing.Folder folder = folders.get(i);
      Path made = temp.resolve(folder.relative());
      Files.setPosixFilePermissions(made, folder.attributes().permissions());
      setTimes(made, folder.attributes());
    }
  }

  private void copyFiles(int threads) throws IOException {
    List<Thread> helpers = new ArrayList<>();
    try {
      // The calling thread takes its first unit before any helper starts: it is the one that
      // reports progress between chunks. On a busy machine helpers started first took every unit
      // before it ran, and then it reported nothing until they were done or 200 ms had passed.
      Unit first = next();
      for (int i = 1; i < threads; i++) {
        Thread helper = new Thread(this::help, Thread.currentThread().getName() + "-copy-" + i);
        helper.setDaemon(true);
        helpers.add(helper);
        helper.start();
      }
      for (Unit unit = first; unit != null; unit = next()) {
        copy(unit, true);
      }
    } catch (Stopped e) {
      // a helper failed; its failure is thrown below
    } catch (IOException | RuntimeException | Error e) {
      fail(e);
    } finally {
      awaitHelpers(helpers);
    }
    Throwable failed = failure.get();
    if (failed instanceof IOException e) {
      throw e;
    } else if (failed instanceof RuntimeException e) {
      throw e;
    } else if (failed instanceof Error e) {
      throw e;
    }
  }

  /** A helper's loop: copies units until none is left or the copy stops. */
  private void help() {
    try {
      for (Unit unit; (unit = next()) != null; ) {
        copy(unit, false);
      }
    } catch (Stopped e) {
      // told to stop: the job's thread reports why
    } catch (Throwable e) {
      fail(e);
    }
  }

  /**
   * Waits until every helper has returned, reporting progress meanwhile. An interrupt meanwhile
   * stops them, is waited out too, and is thrown after.
   */
  private void awaitHelpers(List<Thread> helpers) {
    boolean interrupted = false;
    for (Thread helper : helpers) {
      while (helper.isAlive()) {
        try {
          helper.join(200);
          progress.report(bytes.get(), files.get());
        } catch (InterruptedException e) {
          interrupted = true;
          fail(new InterruptedIOException("the fork was stopped"));
        }
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  private Unit next() {
    if (stopping) {
      throw new Stopped();
    }
    int index = nextUnit.getAndIncrement();
    return index < units.size() ? units.get(index) : null;
  }

  private void fail(Throwable e) {
    if (!failure.compareAndSet(null, e) && failure.get() != e) {
      failure.get().addSuppressed(e);
    }
    stopping = true;
  }

  /** Copies the files of one unit, reading them through one handle of their folder. */
  private void copy(Unit unit, boolean reporting) throws IOException {
    SourceListing.Folder folder = source.folders().get(unit.folder());
    SecureDirectoryStream<Path> handle;
    try {
      handle = source.openFolder(folder.relative());
    } catch (NoSuchFileException removed) {
      return; // the folder was removed after it was listed: nothing of it is left to copy
    } catch (FileSystemException e) {
      throw at(e, folder.relative());
    }
    try (handle) {
      Path into = temp.resolve(folder.relative());
      for (int i = unit.from(); i < unit.to(); i++) {
        Path name = source.files().get(i).name();
        try {
          copyFile(handle, folder.relative().resolve(name), into.resolve(name), reporting);
        } catch (FileSystemException e) {
          throw at(e, folder.relative().resolve(name));
        }
      }
    }
  }

  /**
   * Copies the file {@code relative} (in the source) from its folder's handle to {@code dest}; a
   * file removed since it was listed is left out.
   */
  private void copyFile(
      SecureDirectoryStream<Path> folder, Path relative, Path dest, boolean reporting)
      throws IOException {
    checkRunning(reporting); // before every file: a tree of empty files has no chunk to stop at
    Path name = relative.getFileName();
    PosixFileAttributes attributes;
    SeekableByteChannel opened;
    try {
      // Checked right before opening: a pipe put in the file's place would block the open.
      attributes = Handles.attributes(folder, name);
      if (!attributes.isRegularFile()) {
        throw notRegular(relative);
      }
      opened = folder.newByteChannel(name, OPEN_READ);
    } catch (NoSuchFileException removed) {
      return;
    } catch (FileSystemException e) {
      if (!Handles.attributes(folder, name).isRegularFile()) {
        throw notRegular(relative); // swapped for a link since the check (ELOOP)
      }
      throw e;
    }
    try (SeekableByteChannel channel = opened;
        FileChannel out =
            FileChannel.open(dest, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      if (!(channel instanceof FileChannel in)) {
        throw new IOException("this file system cannot copy " + name);
      }
      long size = attributes.size();
      long position = 0;
      while (position < size) {
        checkRunning(reporting);
        long moved = in.transferTo(position, Math.min(CHUNK, size - position), out);
        if (moved <= 0) {
          break; // the file shrank while we copied it
        }
        position += moved;
        bytes.addAndGet(moved);
        if (reporting) {
          progress.report(bytes.get(), files.get());
        }
      }
    }
    Files.setPosixFilePermissions(dest, attributes.permissions());
    setTimes(dest, attributes);
    files.incrementAndGet();
    if (reporting) {
      progress.report(bytes.get(), files.get());
    }
  }

  private PathRefusedException notRegular(Path relative) {
    return new PathRefusedException(
        "\""
            + source.shown(relative)
            + "\" changed while the fork was reading it: it is no longer a regular file; nothing"
            + " was read through it");
  }

  /**
   * Gives {@code made} the times of {@code source}. What the copy made in its own folder is
   * followed (one call less a file); a link is not.
   */
  private static void setTimes(Path made, PosixFileAttributes source, LinkOption... options)
      throws IOException {
    Files.getFileAttributeView(made, BasicFileAttributeView.class, options)
        .setTimes(source.lastModifiedTime(), source.lastAccessTime(), null);
  }

  /** A failure in the source, named by its place (a handle's own errors name the last part). */
  private FileSystemException at(FileSystemException e, Path relative) {
    return SourceListing.at(e, source.real().resolve(relative));
  }

  private void checkRunning(boolean reporting) throws InterruptedIOException {
    if (reporting) {
      Handles.checkInterrupted();
    }
    if (stopping) {
      throw new Stopped();
    }
  }

  /** Thrown on a thread of the copy once another has failed: it stops without a failure its own. */
  private static final class Stopped extends RuntimeException {
    Stopped() {
      super(null, null, false, false);
    }
  }
}
