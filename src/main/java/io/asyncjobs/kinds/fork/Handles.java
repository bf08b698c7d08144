package io.asyncjobs.kinds.fork;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;

/** What the fork's classes do with folder handles, each in one place. */
final class Handles {

  private Handles() {}

  /**
   * {@code stream} as a handle that acts relative to its own folder; without one (no openat) it is
   * closed and refused, since there is no way to act on a folder without following its path again.
   *
   * @param what what could not be done, for the message ("fork a folder")
   */
  static SecureDirectoryStream<Path> secure(DirectoryStream<Path> stream, String what)
      throws IOException {
    if (stream instanceof SecureDirectoryStream<Path> secure) {
      return secure;
    }
    stream.close();
    throw new IOException("this file system cannot " + what + " without following links");
  }

  /** The attributes of {@code name} in {@code folder} itself, never following a link. */
  static PosixFileAttributes attributes(SecureDirectoryStream<Path> folder, Path name)
      throws IOException {
    return folder
        .getFileAttributeView(name, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
        .readAttributes();
  }

  /** Throws when the current thread was interrupted: a cancel or a timeout stopped the fork. */
  static void checkInterrupted() throws InterruptedIOException {
    if (Thread.currentThread().isInterrupted()) {
      throw new InterruptedIOException("the fork was stopped");
    }
  }
}
