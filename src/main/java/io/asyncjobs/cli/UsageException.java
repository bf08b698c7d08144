package io.asyncjobs.cli;

/** A command line the admin CLI cannot run as given; the message says what to change. */
final class UsageException extends RuntimeException {

  UsageException(String message) {
    super(message, null, false, false);
  }
}
