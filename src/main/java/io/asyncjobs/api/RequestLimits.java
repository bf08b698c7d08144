package io.asyncjobs.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.asyncjobs.config.JobsConfig;
import io.asyncjobs.problem.Problem;
import io.asyncjobs.problem.ProblemException;
import io.quarkus.runtime.configuration.MemorySize;
import io.quarkus.vertx.http.runtime.CurrentVertxRequest;
import io.quarkus.vertx.http.runtime.RouteConstants;
import io.vertx.core.Handler;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.ws.rs.ext.Provider;
import jakarta.ws.rs.ext.ReaderInterceptor;
import jakarta.ws.rs.ext.ReaderInterceptorContext;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Holds every request body to {@code jobs.api.max-body-bytes}: a larger one gets a 413 problem, is
 * not read further, and nothing is enqueued, however it is framed. A declared length is checked
 * before the body is read, ahead of Quarkus's own check, which would answer a bare 413. A body
 * without one (chunked) is counted while it is read and refused at the first byte past the limit,
 * long before Quarkus's cut-off ({@code quarkus.http.limits.max-body-size}), which would cut it off
 * with a bare 413 and an error in the log. So that cut-off must stay well above the limit; the
 * service refuses to start when it does not. A short declared body is read whole before the
 * endpoint runs ({@link #BUFFERED_BYTES}), so that no worker thread waits on the connection for it.
 */
@ApplicationScoped
public class RequestLimits {

  private static final Logger LOG = Logger.getLogger(RequestLimits.class);

  private final long max;
  private final ObjectMapper json;

  /**
   * Bytes of bodies being read whole now ({@link #buffer}), against {@link #bufferedBytesInAll}.
   */
  private final AtomicLong buffering = new AtomicLong();

  private volatile long bufferedBytesInAll = BUFFERED_BYTES_IN_ALL;
  private volatile Duration bodyReadTimeout;

  RequestLimits(
      JobsConfig config,
      ObjectMapper json,
      @ConfigProperty(name = "quarkus.http.limits.max-body-size") Optional<MemorySize> server,
      @ConfigProperty(name = "quarkus.http.read-timeout", defaultValue = "60s")
          Duration readTimeout) {
    this.max = config.api().maxBodyBytes();
    this.json = json;
    this.bodyReadTimeout = readTimeout;
    // A chunked body is read ahead of the JSON parser; twice the limit leaves room for that, so
    // this limit, not the server's bare cut-off, is always the one that answers.
    if (server.isPresent() && server.get().asLongValue() < 2 * max) {
      throw new IllegalStateException(
          "jobs.api.max-body-bytes ("
              + max
              + ") must be at most half of quarkus.http.limits.max-body-size ("
              + server.get().asLongValue()
              + "), the server's own cut-off: raise QUARKUS_HTTP_LIMITS_MAX_BODY_SIZE as well");
    }
  }

  /** The largest body taken, in bytes. */
  long max() {
    return max;
  }

  /** Installs the check of declared lengths in front of Quarkus's own. */
  void install(@Observes Router router) {
    router.route().order(RouteConstants.ROUTE_ORDER_UPLOAD_LIMIT - 1).handler(this::declared);
  }

  private void declared(RoutingContext context) {
    String length = context.request().getHeader(HttpHeaders.CONTENT_LENGTH);
    if (length == null) {
      context.next();
      return;
    }
    long declared;
    try {
      declared = Long.parseLong(length.trim());
    } catch (NumberFormatException e) {
      answer(
          context,
          Problem.of(400, "bad-request", "Bad request", "Content-Length is not a number"),
          false);
      return;
    }
    if (declared > max) {
      answer(
          context,
          tooLarge("the body has " + declared + " bytes; this service takes at most " + max),
          declared <= LINGER_FACTOR * max);
      return;
    }
    if (declared > 0 && declared <= BUFFERED_BYTES) {
      buffer(context, declared);
      return;
    }
    context.next();
  }

  /**
   * A declared body of at most this many bytes is read whole on the event loop before the endpoint
   * runs, as the body of an enqueue, a batch of up to about a thousand small jobs or an admin
   * change always is. Unread, a blocking endpoint reads it on its worker thread through a stream
   * that asks the event loop for each piece and waits for it: four more hand-offs between threads
   * per request (for the bytes, then for the end), on top of the two any blocking endpoint needs. A
   * larger body, or one without a declared length (chunked), is still read as a stream and counted
   * ({@link CountedBodies}), as is one that finds {@link #BUFFERED_BYTES_IN_ALL} taken.
   */
  static final long BUFFERED_BYTES = 64 * 1024;

  /**
   * The most bytes of bodies read whole at once, over every connection. Such a body is read before
   * its caller is known, so this bounds what callers that declare a body and never send it can make
   * the service hold: past it, a body is read as a stream, after the caller is known.
   */
  static final long BUFFERED_BYTES_IN_ALL = 16 * 1024 * 1024;

  /**
   * Reads the whole body, then hands the request on with it, where Quarkus REST takes it instead of
   * reading the connection itself. A client that waits to be told to go on ({@code Expect:
   * 100-continue}) is left to the stream, which tells it only once the caller is known, so that a
   * refused caller never sends its body. So is an HTTP/2 request: Quarkus REST pauses every request
   * it takes, which HTTP/2 refuses once the body has been read. A body not whole within the
   * server's read timeout ({@code quarkus.http.read-timeout}, as the stream would wait) gets a 408
   * problem and the connection is closed.
   */
  private void buffer(RoutingContext context, long declared) {
    HttpServerRequest request = context.request();
    if (request.isEnded()
        || request.version() == HttpVersion.HTTP_2
        || request.headers().contains(HttpHeaders.EXPECT, HttpHeaders.CONTINUE, true)
        || !reserve(declared)) {
      context.next();
      return;
    }
    AtomicBoolean settled = new AtomicBoolean();
    long timer =
        context
            .vertx()
            .setTimer(
                bodyReadTimeout.toMillis(),
                t -> {
                  if (settled.compareAndSet(false, true)) {
                    buffering.addAndGet(-declared);
                    answer(
                        context,
                        Problem.of(
                            408,
                            "body-timeout",
                            "Body not received in time",
                            "the body declared "
                                + declared
                                + " bytes and did not arrive whole within "
                                + bodyReadTimeout.toSeconds()
                                + " s"),
                        false);
                  }
                });
    request
        .body()
        .onComplete(
            read -> {
              if (!settled.compareAndSet(false, true)) {
                return; // answered 408 already
              }
              context.vertx().cancelTimer(timer);
              buffering.addAndGet(-declared);
              if (read.succeeded()) {
                context.setBody(read.result());
                context.next();
              } else {
                // The client went away before its body was whole: no one is left to answer.
                LOG.debugf(read.cause(), "a body of %d bytes was not read whole", declared);
                request.connection().close();
              }
            });
    request.resume();
  }

  /** Takes {@code bytes} of the room for bodies read whole, or says there is not enough. */
  private boolean reserve(long bytes) {
    if (buffering.addAndGet(bytes) <= bufferedBytesInAll) {
      return true;
    }
    buffering.addAndGet(-bytes);
    return false;
  }

  /** For tests: the room for bodies read whole, and how long one may take. */
  void bufferLimits(long bytesInAll, Duration readTimeout) {
    this.bufferedBytesInAll = bytesInAll;
    this.bodyReadTimeout = readTimeout;
  }

  /** For tests: how long a body read whole may take now. */
  Duration bodyReadTimeout() {
    return bodyReadTimeout;
  }

  /**
   * A refused body of at most this many times the limit is read and dropped after the answer (a
   * lingering close), for at most {@link #LINGER_MILLIS}: a client that sends its whole body before
   * it reads (the JDK's HttpClient, generated clients, curl without Expect) then reads the 413
   * instead of a connection reset. A larger one is not waited for.
   */
  static final long LINGER_FACTOR = 4;

  static final long LINGER_MILLIS = 2_000;

  private void answer(RoutingContext context, Problem problem, boolean linger) {
    String body;
    try {
      body = json.writeValueAsString(problem);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
    if (linger) {
      lingerAfterAnswer(context);
    } else {
      closeAfterAnswer(context);
    }
    context
        .response()
        .setStatusCode(problem.status())
        .putHeader(HttpHeaders.CONTENT_TYPE, Problem.MEDIA_TYPE)
        .end(body);
  }

  /**
   * The rest of a refused body is never read, so the connection cannot carry another request: it is
   * closed once the answer is out, as Quarkus closes it after its own 413.
   */
  static void closeAfterAnswer(RoutingContext context) {
    context.response().putHeader(HttpHeaders.CONNECTION, "close");
    context.addEndHandler(done -> context.request().connection().close());
  }

  /**
   * Closes the connection once the answer is out and the rest of the declared body has arrived and
   * been dropped, or after {@link #LINGER_MILLIS}, whichever comes first.
   */
  static void lingerAfterAnswer(RoutingContext context) {
    context.response().putHeader(HttpHeaders.CONNECTION, "close");
    HttpServerRequest request = context.request();
    HttpConnection connection = request.connection();
    if (request.isEnded()) {
      context.addEndHandler(done -> connection.close());
      return;
    }
    long timer = context.vertx().setTimer(LINGER_MILLIS, t -> connection.close());
    Handler<Void> close =
        done -> {
          context.vertx().cancelTimer(timer);
          connection.close();
        };
    request.handler(dropped -> {});
    request.exceptionHandler(e -> close.handle(null));
    request.endHandler(close);
    request.resume();
  }

  private static Problem tooLarge(String detail) {
    return Problem.of(413, "body-too-large", "Body too large", detail);
  }

  /** The limit of a body that declared no length, counted while the body is read. */
  @Provider
  public static class CountedBodies implements ReaderInterceptor {

    // Client proxies: interceptors are made before the configuration is read.
    private final RequestLimits limits;
    private final CurrentVertxRequest request;

    CountedBodies(RequestLimits limits, CurrentVertxRequest request) {
      this.limits = limits;
      this.request = request;
    }

    @Override
    public Object aroundReadFrom(ReaderInterceptorContext context) throws IOException {
      context.setInputStream(
          new Counted(context.getInputStream(), limits.max(), request.getCurrent()));
      return context.proceed();
    }
  }

  /** Fails the read, with the 413 problem, at the first byte past the limit. */
  private static final class Counted extends FilterInputStream {

    private final long max;
    private final RoutingContext request;
    private long count;

    Counted(InputStream in, long max, RoutingContext request) {
      super(in);
      this.max = max;
      this.request = request;
    }

    @Override
    public int read() throws IOException {
      int b = super.read();
      if (b >= 0) {
        add(1);
      }
      return b;
    }

    @Override
    public int read(byte[] buffer, int offset, int length) throws IOException {
      int n = super.read(buffer, offset, length);
      if (n > 0) {
        add(n);
      }
      return n;
    }

    @Override
    public long skip(long n) throws IOException {
      long skipped = super.skip(n);
      add(skipped);
      return skipped;
    }

    private void add(long n) {
      count += n;
      if (count > max) {
        closeAfterAnswer(request);
        throw new ProblemException(
            tooLarge(
                "the body, sent without Content-Length, runs past "
                    + max
                    + " bytes, the most this service takes"));
      }
    }
  }
}
