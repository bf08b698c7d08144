package io.asyncjobs.api;

import io.asyncjobs.problem.Problem;
import io.asyncjobs.problem.ProblemException;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.ext.Provider;
import jakarta.ws.rs.ext.ReaderInterceptor;
import jakarta.ws.rs.ext.ReaderInterceptorContext;
import java.io.IOException;

/**
 * Refuses to read a request body sent without {@code Content-Type}, with a 415 problem. Quarkus
 * REST would otherwise hand it to the route as whatever the route consumes (quarkusio/quarkus
 * #48574), so a body of unknown type was read as JSON and enqueued. Only a body a route reads is
 * checked: a route that takes none (a retry) needs no type, and a route whose body is optional
 * ({@link OptionalBody}, a pause) takes an empty one without a type as no body at all.
 */
@Provider
public class UntypedBodies implements ReaderInterceptor {

  @Override
  public Object aroundReadFrom(ReaderInterceptorContext context) throws IOException {
    String type = context.getHeaders().getFirst(HttpHeaders.CONTENT_TYPE);
    if (type == null || type.isBlank()) {
      if (java.util.Arrays.stream(context.getAnnotations()).anyMatch(OptionalBody.class::isInstance)
          && context.getInputStream().read() < 0) {
        return null; // no body at all
      }
      throw new ProblemException(
          Problem.of(
              415,
              "unsupported-media-type",
              "Unsupported media type",
              "the body has no Content-Type: send it as Content-Type: application/json"));
    }
    return context.proceed();
  }
}
