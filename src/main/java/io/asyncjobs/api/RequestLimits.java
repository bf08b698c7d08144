package io.asyncjobs.api;

import io.asyncjobs.config.JobsConfig;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * Refuses a body larger than {@code jobs.api.max-body-bytes} before anything reads it, with a 413
 * problem. A chunked body without a length is bounded by {@code quarkus.http.limits.max-body-size}.
 */
public class RequestLimits {

  private final JobsConfig config;

  RequestLimits(JobsConfig config) {
    this.config = config;
  }

  @ServerRequestFilter(preMatching = true)
  public Response limitBody(ContainerRequestContext request) {
    String length = request.getHeaderString(HttpHeaders.CONTENT_LENGTH);
    if (length == null) {
      return null;
    }
    long max = config.api().maxBodyBytes();
    long declared;
    try {
      declared = Long.parseLong(length.trim());
    } catch (NumberFormatException e) {
      return Problem.of(400, "bad-request", "Bad request", "Content-Length is not a number")
          .toResponse();
    }
    if (declared > max) {
      return Problem.of(
              413,
              "body-too-large",
              "Body too large",
              "the body has " + declared + " bytes; this service takes at most " + max)
          .toResponse();
    }
    return null;
  }
}
