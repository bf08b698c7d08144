package io.asyncjobs.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The log records of this JVM (a {@code @QuarkusTest} runs the application in it) at or above a
 * level, from {@link #start} until {@link #close}.
 */
public final class LogCapture extends Handler implements AutoCloseable {

  private final List<LogRecord> records = new CopyOnWriteArrayList<>();

  private LogCapture(Level level) {
    setLevel(level);
  }

  /** Captures every record at {@code level} or above, whichever logger it comes from. */
  public static LogCapture start(Level level) {
    LogCapture capture = new LogCapture(level);
    Logger.getLogger("").addHandler(capture);
    return capture;
  }

  /** What was logged so far, one line per record: level, logger, message, thrown. */
  public List<String> lines() {
    return records.stream()
        .map(
            r ->
                r.getLevel()
                    + " "
                    + r.getLoggerName()
                    + ": "
                    + r.getMessage()
                    + (r.getThrown() == null ? "" : " (" + r.getThrown() + ")"))
        .toList();
  }

  @Override
  public void publish(LogRecord record) {
    if (isLoggable(record)) {
      records.add(record);
    }
  }

  @Override
  public void flush() {}

  @Override
  public void close() {
    Logger.getLogger("").removeHandler(this);
  }
}
