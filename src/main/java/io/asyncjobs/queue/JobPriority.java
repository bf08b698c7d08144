package io.asyncjobs.queue;

/**
 * A job's claim priority: an integer from {@value #MIN} to {@value #MAX}, higher first, {@value
 * #DEFAULT} unless the caller asks. Due jobs of a shard are claimed by priority, then (with the
 * {@code fair} claim order) in turns between owners, then in enqueue order.
 */
public final class JobPriority {

  /** The lowest priority. */
  public static final int MIN = -10;

  /** The highest priority. */
  public static final int MAX = 10;

  /** The priority of a job whose caller did not ask for one. */
  public static final int DEFAULT = 0;

  private JobPriority() {}

  /**
   * Checks {@code priority}'s range.
   *
   * @throws IllegalArgumentException naming the range
   */
  public static int check(int priority) {
    if (priority < MIN || priority > MAX) {
      throw new IllegalArgumentException(
          "priority must be between " + MIN + " and " + MAX + " (higher first), was " + priority);
    }
    return priority;
  }
}
