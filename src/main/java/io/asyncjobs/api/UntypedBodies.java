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
 * checked: a route that takes none (a retry) needs no type.
 */
@Provider
public class UntypedBodies implements ReaderInterceptor {

  @Override
  public Object aroundReadFrom(ReaderInterceptorContext context) throws IOException {
    String type = context.getHeaders().getFirst(HttpHeaders.CONTENT_TYPE);
    if (type == null || type.isBlank()) {
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
