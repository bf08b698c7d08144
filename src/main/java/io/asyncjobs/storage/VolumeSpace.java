package io.asyncjobs.storage;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

/**
 * Room on the data volume, and the words a job's error gives when there is too little. A job that
 * writes much measures first and fails at once, before writing anything, when its estimate cannot
 * fit ({@link #require}); one that runs out midway (its estimate was low, or something else filled
 * the volume meanwhile) says so in words too ({@link #orFilledUp}) rather than {@code IOException:
 * No space left on device}.
 */
public final class VolumeSpace {

  /** How the C library words ENOSPC, and with it the messages of Java's I/O errors. */
  static final String ENOSPC = "No space left on device";

  /** The words every such error begins with. */
  public static final String NOT_ENOUGH = "not enough space on the data volume";

  private static final long MIB = 1024L * 1024;

  /** Measures the bytes a folder's volume has left for this process. */
  @FunctionalInterface
  public interface Measure {

    /** The usable bytes of the volume holding {@code folder}. */
    long usable(Path folder) throws IOException;
  }

  /**
   * The volume's own figure, from the file store of the folder or, while it does not exist yet, of
   * its nearest existing parent.
   */
  public static final Measure FILE_STORE =
      folder -> {
        Path existing = folder;
        while (existing.getParent() != null && !Files.exists(existing)) {
          existing = existing.getParent();
        }
        return Files.getFileStore(existing).getUsableSpace();
      };

  private VolumeSpace() {}

  /**
   * Fails at once when {@code needed} bytes do not fit in {@code free}.
   *
   * @param exact whether {@code needed} is a close estimate ("about") or only a lower bound ("at
   *     least"), as when the compressed size is not known yet
   * @throws NoSpaceException saying how much is needed and how much is free
   */
  public static void require(long needed, long free, boolean exact) throws NoSpaceException {
    if (needed > free) {
      throw new NoSpaceException(
          NOT_ENOUGH
              + ": needs "
              + (exact ? "about " : "at least ")
              + roundedUp(needed)
              + " MiB, "
              + free / MIB
              + " MiB free",
          null);
    }
  }

  /**
   * {@code failure} in words when the volume ran out of space under it (ENOSPC anywhere in its
   * causes); otherwise {@code failure} itself.
   *
   * @param freeAtStart what the job measured before writing, for the words
   */
  public static Exception orFilledUp(Exception failure, long freeAtStart) {
    if (failure instanceof NoSpaceException || !isNoSpace(failure)) {
      return failure;
    }
    return new NoSpaceException(
        NOT_ENOUGH
            + ": it filled up while the job was writing ("
            + freeAtStart / MIB
            + " MiB were free when it started)",
        failure);
  }

  /** Whether the volume ran out of space under {@code failure}: ENOSPC anywhere in its causes. */
  public static boolean isNoSpace(Throwable failure) {
    Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
      if (t instanceof NoSpaceException
          || (t instanceof IOException && String.valueOf(t.getMessage()).contains(ENOSPC))) {
        return true;
      }
    }
    return false;
  }

  /**
   * The words for a failure whose causes hold a {@link NoSpaceException} (its message), or ENOSPC
   * that no job put into words (the general sentence); null for any other failure.
   */
  public static String describe(Throwable failure) {
    Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
      if (t instanceof NoSpaceException) {
        return t.getMessage();
      }
    }
    return isNoSpace(failure) ? NOT_ENOUGH + ": it filled up while the job was writing" : null;
  }

  private static long roundedUp(long bytes) {
    return (bytes + MIB - 1) / MIB;
  }
}
