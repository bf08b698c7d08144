package io.asyncjobs.api;

import io.asyncjobs.problem.Problem;
import io.asyncjobs.problem.ProblemException;
import io.asyncjobs.queue.DatabaseErrors;
import io.asyncjobs.time.Clock;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.jboss.logging.Logger;

/**
 * The answer to a request that failed because the database could not be reached (a restart, a
 * failover before a primary is found, a network cut, a pool that could not connect in time): a 503
 * problem with {@code Retry-After}, since the caller can only wait and try again, and a warning in
 * the log at most once a minute, however many requests meet the outage. A stack trace per request
 * would bury the log under copies of one cause, which lies outside the service.
 */
@ApplicationScoped
public class DatabaseUnavailable {

  /** The problem's {@code type} suffix. */
  static final String SLUG = "database-unavailable";

  /**
   * What {@code Retry-After} asks a caller to wait: about as long as a restart or a failover takes
   * to show, and more than the pool's validation of an idle connection (a second).
   */
  static final Duration RETRY_AFTER = Duration.ofSeconds(5);

  /** The least time between two warnings; the second counts the requests refused in between. */
  static final Duration WARNING_INTERVAL = Duration.ofMinutes(1);

  private static final Logger LOG = Logger.getLogger(DatabaseUnavailable.class);

  @Inject Clock clock;

  /** When the last warning was logged, or null before the first; guarded by {@code this}. */
  private Instant warnedAt;

  /** Requests answered 503 since that warning, not counting its own; guarded by {@code this}. */
  private long refusedSince;

  /**
   * Whether {@code failure} says the database could not be reached: an SQL error of the connection
   * anywhere in its cause chain (SQLSTATE class 08 or 57P01-57P03, an acquisition timeout of the
   * pool), however it was wrapped on the way (our own messages, Hibernate's
   * JDBCConnectionException).
   */
  public boolean explains(Throwable failure) {
    return DatabaseErrors.isConnectionLost(failure);
  }

  /** The 503 for a request that {@code failure} stopped; warns unless it did so lately. */
  public Response answer(Throwable failure) {
    warnAtMostOncePerInterval(failure);
    return new ProblemException(
            Problem.of(
                503,
                SLUG,
                "Database unavailable",
                "the service cannot reach its database at the moment (a restart or a failover);"
                    + " try again in a few seconds. An enqueue cut off this way may or may not have"
                    + " been stored: repeat it with the same Idempotency-Key to be sure of one"
                    + " job"),
            Map.of("Retry-After", Long.toString(RETRY_AFTER.toSeconds())))
        .toResponse();
  }

  private void warnAtMostOncePerInterval(Throwable failure) {
    Instant now = clock.now();
    long refused;
    synchronized (this) {
      if (warnedAt != null && now.isBefore(warnedAt.plus(WARNING_INTERVAL))) {
        refusedSince++;
        LOG.debugf(failure, "A request was answered 503: the database cannot be reached");
        return;
      }
      refused = refusedSince;
      warnedAt = now;
      refusedSince = 0;
    }
    LOG.warnf(
        "The database cannot be reached (%s); requests that need it are answered 503 with"
            + " Retry-After until it is back%s. This warning repeats at most every %d s; the"
            + " stack traces are logged at DEBUG",
        cause(failure),
        refused == 0 ? "" : "; " + refused + " more request(s) were answered so since the last",
        WARNING_INTERVAL.toSeconds());
  }

  /** The database's or the driver's own words for the failure, without Java class names. */
  private static String cause(Throwable failure) {
    String words = null;
    for (Throwable e = failure; e != null; e = e.getCause() == e ? null : e.getCause()) {
      if (e instanceof SQLException && e.getMessage() != null) {
        words = e.getMessage();
      }
    }
    return words == null ? "no connection" : words;
  }
}
