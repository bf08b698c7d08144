package io.asyncjobs.operations;

import io.asyncjobs.auth.Caller;
import io.asyncjobs.problem.ProblemException;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobReads;
import io.asyncjobs.queue.JobStatus;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * Parsing and lookups every route shares; each failure is the problem a caller should see. The
 * admin CLI parses uids here too, so it refuses the same text with the same words.
 */
public final class Requests {

  private static final Pattern UUID_TEXT =
      Pattern.compile(
          "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");

  private Requests() {}

  /** A uid in its canonical text form; anything else is a 400. */
  public static UUID uid(String text, String name) {
    if (text == null || !UUID_TEXT.matcher(text).matches()) {
      throw ProblemException.badRequest(
          name + " must be a uuid such as 0190a5c8-7c1e-7b3a-9f00-1a2b3c4d5e6f");
    }
    return UUID.fromString(text);
  }

  /** The job, when the caller may see it; another owner's job is a 404 just like a missing one. */
  public static Job visibleJob(JobReads reads, Caller caller, UUID uid) {
    Job job = reads.getJob(uid).orElseThrow(() -> noSuchJob(uid));
    if (!caller.maySee(job)) {
      throw noSuchJob(uid);
    }
    return job;
  }

  /** 404 for a job that does not exist (or that the caller may not see). */
  public static ProblemException noSuchJob(UUID uid) {
    return ProblemException.notFound("no job " + uid);
  }

  /** A status filter; null when absent, 400 when not one of the four. */
  public static JobStatus status(String text) {
    if (text == null || text.isEmpty()) {
      return null;
    }
    return JobStatus.fromDbValue(text)
        .orElseThrow(
            () ->
                ProblemException.badRequest(
                    "status must be one of pending, running, done, failed; got " + quote(text)));
  }

  /** A page size, {@code fallback} when absent, 400 outside 1 to the queue's maximum. */
  public static int limit(String text, int fallback) {
    if (text == null || text.isEmpty()) {
      return fallback;
    }
    try {
      int value = Integer.parseInt(text);
      if (value >= 1 && value <= JobReads.MAX_PAGE_SIZE) {
        return value;
      }
    } catch (NumberFormatException e) {
      // falls through to the problem below
    }
    throw ProblemException.badRequest(
        "limit must be a whole number from 1 to "
            + JobReads.MAX_PAGE_SIZE
            + "; got "
            + quote(text));
  }

  /** Caller text shortened for an error message. */
  public static String quote(String text) {
    String shown = text.length() > 60 ? text.substring(0, 60) + "..." : text;
    return "\"" + shown.replaceAll("\\p{Cntrl}", "?") + "\"";
  }
}
