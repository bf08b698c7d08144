package io.asyncjobs.files;

import io.asyncjobs.storage.DataDirectory;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.UUID;

/**
 * Where jobs write what they make: {@code artifacts/<kind>/<uid>/} under the data directory. A file
 * is written under a temporary name and renamed when complete, so a crash never leaves a half file
 * that a download could serve. Each attempt gets its own temporary name: an old owner still writing
 * while a retry runs elsewhere never shares, truncates or removes the retry's file, nor the other
 * way round, and whichever renames last leaves a complete file.
 */
@ApplicationScoped
public class Artifacts {

  /** The suffix of a file still being written; downloads never name one. */
  public static final String PARTIAL_SUFFIX = ".partial";

  private final DataDirectory data;

  Artifacts(DataDirectory data) {
    this.data = data;
  }

  /** The job's artifact folder, created when missing. */
  public Path folder(String kind, UUID uid) throws IOException {
    return Files.createDirectories(location(kind, uid));
  }

  /** The job's artifact folder, whether or not it exists. */
  public Path location(String kind, UUID uid) {
    return data.root().resolve("artifacts").resolve(kind).resolve(uid.toString());
  }

  /**
   * A new temporary name for the file or folder {@code target}, next to it and ending in {@link
   * #PARTIAL_SUFFIX}: {@code <name>.<random>.partial}. Every call gives another name, so call it
   * once per attempt, keep the result, and delete it if the attempt fails.
   */
  public static Path partial(Path target) {
    return target.resolveSibling(target.getFileName() + "." + UUID.randomUUID() + PARTIAL_SUFFIX);
  }

  /** Renames the complete {@code partial} file to {@code target} in one step. */
  public static Path publish(Path partial, Path target) throws IOException {
    return Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE);
  }

  /** {@code path} relative to the data directory: what a job's result names. */
  public String relative(Path path) {
    return data.root().relativize(path).toString();
  }

  /** Removes the job's artifact folder and everything in it; nothing to do when it is gone. */
  public void remove(String kind, UUID uid) throws IOException {
    Trees.delete(location(kind, uid));
  }
}
