package io.asyncjobs.problem;

import jakarta.ws.rs.core.Response;
import java.util.Map;

/**
 * Ends a request with a problem response. Thrown by resources for every error a caller can cause;
 * {@link ProblemMappers} turns it into the response.
 */
public class ProblemException extends RuntimeException {

  private final transient Problem problem;
  private final transient Map<String, String> headers;

  /** A problem with extra response headers (for example {@code Content-Range} on a 416). */
  public ProblemException(Problem problem, Map<String, String> headers) {
    super(problem.detail(), null, false, false);
    this.problem = problem;
    this.headers = Map.copyOf(headers);
  }

  /** A problem as it is. */
  public ProblemException(Problem problem) {
    this(problem, Map.of());
  }

  /** The problem this exception carries. */
  public Problem problem() {
    return problem;
  }

  /** The response: the problem body and any extra headers. */
  public Response toResponse() {
    Response.ResponseBuilder builder = Response.fromResponse(problem.toResponse());
    headers.forEach(builder::header);
    return builder.build();
  }

  /** 400: the request is malformed; {@code detail} says what to fix. */
  public static ProblemException badRequest(String detail) {
    return new ProblemException(Problem.of(400, "bad-request", "Bad request", detail));
  }

  /** 404: no such resource, or one the caller may not see (the two look the same). */
  public static ProblemException notFound(String detail) {
    return new ProblemException(Problem.of(404, "not-found", "Not found", detail));
  }

  /** 409: the job is not in a state that allows this. */
  public static ProblemException conflict(String slug, String title, String detail) {
    return new ProblemException(Problem.of(409, slug, title, detail));
  }

  /** 401: no valid bearer token. */
  public static ProblemException unauthenticated(String detail) {
    return new ProblemException(
        Problem.of(401, "unauthenticated", "Unauthenticated", detail),
        Map.of("WWW-Authenticate", "Bearer"));
  }

  /** 403: authenticated (or holding a link) but not allowed. */
  public static ProblemException forbidden(String detail) {
    return new ProblemException(Problem.of(403, "forbidden", "Forbidden", detail));
  }

  /** 422: well-formed but unacceptable. */
  public static ProblemException unprocessable(String slug, String title, String detail) {
    return new ProblemException(Problem.of(422, slug, title, detail));
  }
}
