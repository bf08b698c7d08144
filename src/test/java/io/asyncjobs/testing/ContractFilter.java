package io.asyncjobs.testing;

import io.restassured.filter.FilterContext;
import io.restassured.filter.OrderedFilter;
import io.restassured.http.Header;
import io.restassured.response.Response;
import io.restassured.specification.FilterableRequestSpecification;
import io.restassured.specification.FilterableResponseSpecification;
import java.io.File;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * A RestAssured filter that holds every exchange with the app's {@code /api} routes to the OpenAPI
 * document the app serves ({@link ContractCheck}) and hands any violations to a sink (by default
 * {@link ContractViolations#report}, which fails the test or collects them). Requests to other
 * hosts or ports, to {@code /q/*} and to pages outside {@code /api} pass unchecked.
 *
 * <p>Written on networknt's json-schema-validator rather than Atlassian's
 * swagger-request-validator: the latter validates with a draft-04 engine and, on an OpenAPI 3.1
 * document, ignores {@code type: [string, "null"]}, {@code const} and {@code additionalProperties:
 * false} (see the commit that added this class).
 */
public final class ContractFilter implements OrderedFilter {

  private final Supplier<ContractDocument> document;
  private final IntSupplier port;
  private final Consumer<List<ContractViolation>> sink;
  private ContractCheck check;

  /**
   * A filter checking exchanges with the app on {@code port} against {@code document}, handing the
   * violations of each exchange to {@code sink}.
   */
  public ContractFilter(
      ContractDocument document, int port, Consumer<List<ContractViolation>> sink) {
    this(() -> document, () -> port, sink);
  }

  /**
   * A filter whose document and app port are looked up at its first exchange: Quarkus sets
   * RestAssured's port only after the before-each callbacks that install the filter have run.
   */
  public ContractFilter(
      Supplier<ContractDocument> document,
      IntSupplier port,
      Consumer<List<ContractViolation>> sink) {
    this.document = document;
    this.port = port;
    this.sink = sink;
  }

  /** Last of the filters, so it sees the request as sent and the answer as received. */
  @Override
  public int getOrder() {
    return LOWEST_PRECEDENCE;
  }

  @Override
  public Response filter(
      FilterableRequestSpecification request,
      FilterableResponseSpecification responseSpec,
      FilterContext ctx) {
    Response response = ctx.next(request, responseSpec);
    URI uri = URI.create(request.getURI());
    String path = uri.getPath() == null ? "" : uri.getPath();
    if (uri.getPort() != port.getAsInt() || !(path.equals("/api") || path.startsWith("/api/"))) {
      return response;
    }
    ContractCheck.Exchange exchange =
        new ContractCheck.Exchange(
            request.getMethod(),
            uri.getRawPath(),
            query(uri.getRawQuery()),
            headers(request.getHeaders()),
            body(request.getBody()),
            request.getBody() instanceof InputStream || request.getBody() instanceof File,
            response.getStatusCode(),
            headers(response.getHeaders()),
            response::asByteArray);
    List<ContractViolation> violations;
    try {
      if (check == null) {
        check = new ContractCheck(document.get());
      }
      violations = check.check(exchange);
    } catch (RuntimeException e) {
      // A fault of the check itself is reported like a violation, so a collecting run goes on.
      violations =
          List.of(
              new ContractViolation(
                  request.getMethod(),
                  uri.getRawPath(),
                  response.getStatusCode(),
                  "",
                  "check-error",
                  e.toString()));
    }
    if (!violations.isEmpty()) {
      sink.accept(violations);
    }
    return response;
  }

  private static Map<String, List<String>> query(String raw) {
    Map<String, List<String>> query = new LinkedHashMap<>();
    if (raw == null || raw.isEmpty()) {
      return query;
    }
    for (String pair : raw.split("&")) {
      int eq = pair.indexOf('=');
      String name = ContractDocument.decode(eq < 0 ? pair : pair.substring(0, eq));
      String value = eq < 0 ? "" : ContractDocument.decode(pair.substring(eq + 1));
      query.computeIfAbsent(name, n -> new ArrayList<>()).add(value);
    }
    return query;
  }

  private static Map<String, List<String>> headers(io.restassured.http.Headers headers) {
    Map<String, List<String>> byName = new LinkedHashMap<>();
    for (Header h : headers) {
      byName
          .computeIfAbsent(h.getName().toLowerCase(Locale.ROOT), n -> new ArrayList<>())
          .add(h.getValue());
    }
    return byName;
  }

  /** The request body as text; objects RestAssured would serialize are serialized the same way. */
  private static String body(Object body) {
    if (body == null || body instanceof InputStream || body instanceof File) {
      return null;
    }
    if (body instanceof String s) {
      return s;
    }
    if (body instanceof byte[] bytes) {
      return new String(bytes, StandardCharsets.UTF_8);
    }
    return ContractDocument.JSON.writeValueAsString(body);
  }
}
