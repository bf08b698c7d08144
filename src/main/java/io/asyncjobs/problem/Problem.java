package io.asyncjobs.problem;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.quarkus.runtime.annotations.RegisterForReflection;
import jakarta.ws.rs.core.Response;

/**
 * An error body in the {@code application/problem+json} shape (RFC 9457). Every 4xx and 5xx the API
 * sends carries one; {@code type} names the class of error and is listed in docs/api.md.
 *
 * @param type {@code urn:async-jobs:problem:<slug>}, stable across releases
 * @param title the short, fixed summary of the type
 * @param status the HTTP status, repeated for clients that lost it
 * @param detail what went wrong with this request, in words a caller can act on
 */
// Sent only inside a Response (exception mappers), so Quarkus cannot see it as a body type and
// register it; without this, a native executable would fail to write every error body.
@RegisterForReflection
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Problem(String type, String title, int status, String detail) {

  /** The media type of every problem body. */
  public static final String MEDIA_TYPE = "application/problem+json";

  /** The prefix of every {@code type}. */
  public static final String TYPE_PREFIX = "urn:async-jobs:problem:";

  /** A problem of the type {@code slug}. */
  public static Problem of(int status, String slug, String title, String detail) {
    return new Problem(TYPE_PREFIX + slug, title, status, detail);
  }

  /** This problem as a response with the problem media type. */
  public Response toResponse() {
    return Response.status(status).type(MEDIA_TYPE).entity(this).build();
  }
}
