package io.asyncjobs.testing;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A small tmpfs mounted on a folder, so a job writing there meets a real full volume (ENOSPC).
 * Mounting needs root, as the build has in CI; where it is refused, {@link #mounted()} says so and
 * the test provokes the same error through its seam instead, so it still runs and asserts.
 */
public final class SmallVolume implements AutoCloseable {

  private final Path at;
  private final boolean mounted;

  private SmallVolume(Path at, boolean mounted) {
    this.at = at;
    this.mounted = mounted;
  }

  /** Mounts a tmpfs of {@code size} (as {@code mount -o size=}, e.g. {@code 1m}) on {@code at}. */
  public static SmallVolume mount(Path at, String size) throws IOException {
    boolean ok =
        run("mount", "-t", "tmpfs", "-o", "size=" + size + ",mode=0755", "tmpfs", at.toString());
    if (!ok) {
      System.err.println(
          "SmallVolume: cannot mount a tmpfs on " + at + " (not root?); the test's seam stands in");
    }
    return new SmallVolume(at, ok);
  }

  /** Whether the tmpfs is mounted: a real full volume, rather than the seam. */
  public boolean mounted() {
    return mounted;
  }

  @Override
  public void close() throws IOException {
    if (mounted && !run("umount", at.toString())) {
      throw new IOException("cannot unmount the tmpfs on " + at);
    }
  }

  private static boolean run(String... command) throws IOException {
    try {
      Process process =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      return process.waitFor(30, TimeUnit.SECONDS) && process.exitValue() == 0;
    } catch (IOException e) {
      return false; // no mount program
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("mount was interrupted");
    }
  }
}
