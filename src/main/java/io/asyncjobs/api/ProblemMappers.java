package io.asyncjobs.api;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.exc.InvalidDefinitionException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;
import io.asyncjobs.problem.Problem;
import io.asyncjobs.problem.ProblemException;
import io.quarkus.security.AuthenticationCompletionException;
import io.quarkus.security.AuthenticationFailedException;
import io.quarkus.security.AuthenticationRedirectException;
import io.quarkus.security.ForbiddenException;
import io.quarkus.security.UnauthorizedException;
import io.vertx.core.http.HttpClosedException;
import jakarta.inject.Inject;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.util.List;
import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/**
 * Turns every exception that reaches the REST layer into a problem response, so no error leaves
 * without a {@code application/problem+json} body. Client errors are 4xx with a detail the caller
 * can act on; a database that cannot be reached is a 503 ({@link DatabaseUnavailable}); anything
 * else unexpected is a 500 that names no internals and is logged.
 */
public class ProblemMappers {

  private static final Logger LOG = Logger.getLogger(ProblemMappers.class);

  @Inject DatabaseUnavailable database;

  @ServerExceptionMapper
  public Response problem(ProblemException e) {
    return e.toResponse();
  }

  @ServerExceptionMapper
  public Response unauthorized(UnauthorizedException e) {
    return unauthenticated("this route needs a bearer token");
  }

  @ServerExceptionMapper
  public Response authenticationFailed(AuthenticationFailedException e) {
    return unauthenticated("the bearer token is invalid or expired");
  }

  @ServerExceptionMapper
  public Response authenticationCompletion(AuthenticationCompletionException e) {
    return unauthenticated("the bearer token is invalid or expired");
  }

  @ServerExceptionMapper
  public Response authenticationRedirect(AuthenticationRedirectException e) {
    return unauthenticated("this route needs a bearer token");
  }

  @ServerExceptionMapper
  public Response forbidden(ForbiddenException e) {
    return ProblemException.forbidden("this route needs a role the token lacks").toResponse();
  }

  @ServerExceptionMapper
  public Response malformedJson(JsonParseException e) {
    return badJson("the body is not valid JSON: " + e.getOriginalMessage());
  }

  @ServerExceptionMapper
  public Response mismatchedJson(MismatchedInputException e) {
    return badJson(describe(e));
  }

  @ServerExceptionMapper
  public Response rejectedJson(ValueInstantiationException e) {
    Throwable cause = e.getCause() == null ? e : e.getCause();
    return badJson("the body has an invalid value: " + cause.getMessage());
  }

  @ServerExceptionMapper
  public Response json(JsonProcessingException e) {
    if (e instanceof InvalidDefinitionException) {
      return internal(e);
    }
    return badJson(describe(e));
  }

  @ServerExceptionMapper
  public Response web(WebApplicationException e, UriInfo uri) {
    Response original = e.getResponse();
    int status = original.getStatus();
    if (status >= 500) {
      return internal(e);
    }
    if (status == 400 && e.getCause() instanceof ValueInstantiationException rejected) {
      // Quarkus REST wraps what Jackson threw while reading a body. Jackson's own message for a
      // refused value names our class; the cause's message says what to fix.
      return rejectedJson(rejected);
    }
    if (status == 400 && e.getCause() instanceof JsonProcessingException json) {
      return badJson(describe(json));
    }
    Problem problem =
        switch (status) {
          case 400 ->
              Problem.of(400, "malformed-body", "Malformed body", "the request could not be read");
          case 404 ->
              Problem.of(404, "not-found", "Not found", "no route matches /" + uri.getPath());
          case 405 ->
              Problem.of(
                  405,
                  "method-not-allowed",
                  "Method not allowed",
                  "this route does not take that method");
          case 406 ->
              Problem.of(
                  406,
                  "not-acceptable",
                  "Not acceptable",
                  "this route answers application/json (or the type its documentation names)");
          case 415 ->
              Problem.of(
                  415,
                  "unsupported-media-type",
                  "Unsupported media type",
                  "send the body as application/json");
          default ->
              Problem.of(
                  status,
                  "http-" + status,
                  original.getStatusInfo().getReasonPhrase(),
                  e.getMessage());
        };
    Response.ResponseBuilder builder = Response.fromResponse(problem.toResponse());
    String allow = original.getHeaderString(HttpHeaders.ALLOW);
    if (allow == null && status == 405) {
      allow = AllowedMethods.of(uri.getPath());
    }
    if (allow != null) {
      builder.header(HttpHeaders.ALLOW, allow);
    }
    return builder.build();
  }

  /**
   * What to fix in a body Jackson could not read, in the API's own field names: Jackson's messages
   * name our Java classes and types, which mean nothing to a caller.
   */
  static String describe(JsonProcessingException e) {
    if (e instanceof UnrecognizedPropertyException unknown) {
      List<String> known =
          unknown.getKnownPropertyIds() == null
              ? List.of()
              : unknown.getKnownPropertyIds().stream().map(String::valueOf).sorted().toList();
      return "the body has an unknown field \""
          + unknown.getPropertyName()
          + "\""
          + (known.isEmpty() ? "" : "; the fields are " + String.join(", ", known));
    }
    if (e instanceof MismatchedInputException mismatch && mismatch.getTargetType() != null) {
      String expected = expected(mismatch.getTargetType());
      return mismatch.getPath().isEmpty()
          ? "the body must be " + expected
          : "the body's " + field(mismatch.getPath()) + " must be " + expected;
    }
    if (e instanceof JsonParseException) {
      return "the body is not valid JSON: " + e.getOriginalMessage();
    }
    return "the body could not be read as JSON";
  }

  private static String field(List<JsonMappingException.Reference> path) {
    StringBuilder name = new StringBuilder();
    for (JsonMappingException.Reference step : path) {
      if (step.getFieldName() != null) {
        name.append(name.isEmpty() ? "" : ".").append(step.getFieldName());
      } else if (step.getIndex() >= 0) {
        name.append('[').append(step.getIndex()).append(']');
      }
    }
    return name.toString();
  }

  private static String expected(Class<?> type) {
    if (type == Integer.class
        || type == int.class
        || type == Long.class
        || type == long.class
        || type == Short.class
        || type == short.class
        || type == java.math.BigInteger.class) {
      return "a whole number";
    }
    if (Number.class.isAssignableFrom(type) || type == double.class || type == float.class) {
      return "a number";
    }
    if (type == Boolean.class || type == boolean.class) {
      return "true or false";
    }
    if (CharSequence.class.isAssignableFrom(type) || type == char.class) {
      return "a string";
    }
    if (java.util.Collection.class.isAssignableFrom(type) || type.isArray()) {
      return "a list";
    }
    if (type.isEnum()) {
      return "one of "
          + String.join(
              ", ", java.util.Arrays.stream(type.getEnumConstants()).map(String::valueOf).toList());
    }
    return "an object";
  }

  @ServerExceptionMapper
  public Response unexpected(Throwable e) {
    return internal(e);
  }

  private Response internal(Throwable e) {
    if (database.explains(e)) {
      // On any route: every one reads or writes the database, and none can do better than wait.
      return database.answer(e);
    }
    if (clientWentAway(e)) {
      // A caller that closed its connection (a browser leaving an event stream) is routine.
      LOG.debugf("The client went away while a request was answered: %s", e);
    } else {
      LOG.error("Unexpected error while answering a request", e);
    }
    return Problem.of(
            500,
            "internal",
            "Internal error",
            "the service failed to answer; the error is in its log")
        .toResponse();
  }

  /** Whether the error only says that the connection was closed from the other end. */
  static boolean clientWentAway(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof ClosedChannelException || t instanceof HttpClosedException) {
        // The second: the connection closed while its body was still being read.
        return true;
      }
      if (t instanceof IOException io
          && io.getMessage() != null
          && (io.getMessage().contains("Connection reset")
              || io.getMessage().contains("Broken pipe"))) {
        return true;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return false;
  }

  private static Response badJson(String detail) {
    return Problem.of(400, "malformed-body", "Malformed body", detail).toResponse();
  }

  private static Response unauthenticated(String detail) {
    return ProblemException.unauthenticated(detail).toResponse();
  }
}
