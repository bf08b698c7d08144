package io.asyncjobs.queue;

import java.sql.SQLException;

/** A statement of the engine failed; its cause says whether the database went away. */
public final class StoreException extends IllegalStateException {
  StoreException(String message, SQLException cause) {
    super(message + ": " + cause.getMessage(), cause);
  }
}
