package io.asyncjobs.engine;

import com.fasterxml.jackson.core.JsonProcessingException;
import java.io.CharConversionException;
import java.io.EOFException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UTFDataFormatException;
import java.io.UnsupportedEncodingException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.charset.CharacterCodingException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemLoopException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.NotLinkException;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.zip.ZipException;

/**
 * Which failures are worth another attempt when the kind does not say: the default of {@link
 * JobService#retryable}.
 */
final class RetryPolicy {

  /**
   * I/O errors that describe the job's input or the caller's files rather than a passing trouble:
   * trying again finds the same file missing, the same document malformed. An interrupted read
   * means the task was stopped, which is never retried either.
   */
  private static final List<Class<? extends Throwable>> INPUT_ERRORS =
      List.of(
          FileNotFoundException.class,
          NoSuchFileException.class,
          AccessDeniedException.class,
          NotDirectoryException.class,
          FileAlreadyExistsException.class,
          DirectoryNotEmptyException.class,
          NotLinkException.class,
          FileSystemLoopException.class,
          CharacterCodingException.class,
          CharConversionException.class,
          UTFDataFormatException.class,
          UnsupportedEncodingException.class,
          EOFException.class,
          ZipException.class,
          JsonProcessingException.class,
          ClosedByInterruptException.class);

  private RetryPolicy() {}

  /**
   * Whether {@code failure} is transient: a {@link TransientFailure} or one of {@code declared}
   * anywhere in its cause chain; otherwise an {@link IOException} in the chain, unless the chain
   * also holds one of the input errors above.
   */
  static boolean transientByDefault(Throwable failure, Set<Class<? extends Throwable>> declared) {
    boolean io = false;
    boolean input = false;
    Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
      if (t instanceof TransientFailure || isAny(t, declared)) {
        return true;
      }
      io |= t instanceof IOException;
      input |= isAny(t, INPUT_ERRORS);
    }
    return io && !input;
  }

  private static boolean isAny(Throwable t, Iterable<Class<? extends Throwable>> types) {
    for (Class<? extends Throwable> type : types) {
      if (type.isInstance(t)) {
        return true;
      }
    }
    return false;
  }
}
