package io.asyncjobs.callbacks;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * One callback POST, over HTTP/1.1, to an address {@link CallbackUrls} already resolved and
 * checked, all of it (connecting, the TLS handshake, sending, the answer's status line) within one
 * deadline.
 *
 * <p>Why not {@code java.net.http.HttpClient}: it resolves the URL's host itself when it connects,
 * a second lookup after the one that was checked, so a name that answers an allowed address first
 * and a refused one next (DNS rebinding) would get through; and on Java 17 it has no hook to hand
 * it an address (no resolver SPI before Java 18, and a URL rewritten to the IP literal would lose
 * the name for TLS). Here the socket is connected to the checked address and TLS runs over it under
 * the URL's host name: SNI carries the name and the certificate must match it ({@code HTTPS}
 * endpoint identification), as if the name had been resolved by the socket itself. The answer's
 * body is not read: only its status counts, and {@code Connection: close} ends the exchange.
 * Redirects are not followed.
 */
final class CallbackPost {

  /** The most bytes of status lines and interim answers read before the final status line. */
  private static final int MAX_HEAD_BYTES = 16 * 1024;

  /** Closes the socket of an exchange whose deadline passed, whatever it was blocked in. */
  private static final ScheduledExecutorService WATCHDOG =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "jobs-callbacks-deadline");
            t.setDaemon(true);
            return t;
          });

  private final SSLSocketFactory tls;

  /** A sender whose https connections trust what {@code tls} trusts. */
  CallbackPost(SSLSocketFactory tls) {
    this.tls = tls;
  }

  /**
   * POSTs {@code body} to {@code target}, connecting to the first of {@code addresses} that takes
   * the connection (never to another address of the host), by {@code deadlineNanos} ({@link
   * System#nanoTime()}).
   *
   * @return the answer's HTTP status
   * @throws HttpConnectTimeoutException when no connection was made by the deadline
   * @throws HttpTimeoutException when the answer did not come by the deadline
   * @throws IOException when no address took the connection, or the exchange failed
   */
  int send(
      URI target,
      List<InetAddress> addresses,
      Map<String, String> headers,
      byte[] body,
      long deadlineNanos)
      throws IOException {
    int port = CallbackUrls.port(target);
    IOException last = null;
    for (InetAddress address : addresses) {
      long left = deadlineNanos - System.nanoTime();
      if (left <= 0) {
        break;
      }
      Socket socket = new Socket();
      try {
        socket.connect(new InetSocketAddress(address, port), millis(left));
      } catch (SocketTimeoutException e) {
        close(socket);
        last = new HttpConnectTimeoutException("no connection within the timeout");
        continue;
      } catch (IOException e) {
        close(socket);
        last = e;
        continue;
      }
      return exchange(socket, target, port, headers, body, deadlineNanos);
    }
    throw last != null ? last : new HttpConnectTimeoutException("no connection within the timeout");
  }

  private int exchange(
      Socket socket,
      URI target,
      int port,
      Map<String, String> headers,
      byte[] body,
      long deadlineNanos)
      throws IOException {
    long left = Math.max(1, deadlineNanos - System.nanoTime());
    ScheduledFuture<?> guard = WATCHDOG.schedule(() -> close(socket), left, TimeUnit.NANOSECONDS);
    try {
      socket.setSoTimeout(millis(left));
      Socket channel = socket;
      if ("https".equalsIgnoreCase(target.getScheme())) {
        channel = handshake(socket, target, port);
      }
      OutputStream out = channel.getOutputStream();
      out.write(head(target, headers, body.length));
      out.write(body);
      out.flush();
      return status(new BufferedInputStream(channel.getInputStream()));
    } catch (IOException e) {
      if (deadlineNanos - System.nanoTime() <= 0) {
        throw new HttpTimeoutException("no answer within the timeout");
      }
      throw e;
    } finally {
      guard.cancel(false);
      close(socket);
    }
  }

  /**
   * TLS over the connected socket, under the URL's host: the name goes in SNI and the certificate
   * must match it, though the socket was connected to an address and not to the name.
   */
  private Socket handshake(Socket socket, URI target, int port) throws IOException {
    String host = CallbackUrls.bare(target.getHost());
    SSLSocket ssl = (SSLSocket) tls.createSocket(socket, host, port, true);
    SSLParameters parameters = ssl.getSSLParameters();
    parameters.setEndpointIdentificationAlgorithm("HTTPS");
    if (!CallbackUrls.isIpLiteral(host)) {
      parameters.setServerNames(List.of(new SNIHostName(host)));
    }
    ssl.setSSLParameters(parameters);
    ssl.startHandshake();
    return ssl;
  }

  /** The request line and headers; the values are the service's own, never a caller's text. */
  private static byte[] head(URI target, Map<String, String> headers, int length) {
    String path =
        target.getRawPath() == null || target.getRawPath().isEmpty() ? "/" : target.getRawPath();
    if (target.getRawQuery() != null) {
      path += "?" + target.getRawQuery();
    }
    StringBuilder head = new StringBuilder();
    head.append("POST ").append(path).append(" HTTP/1.1\r\n");
    // check() refused user information, so the authority is the host and the port as written.
    head.append("Host: ").append(target.getRawAuthority()).append("\r\n");
    headers.forEach((name, value) -> head.append(name).append(": ").append(value).append("\r\n"));
    head.append("Content-Length: ").append(length).append("\r\n");
    head.append("Connection: close\r\n\r\n");
    return head.toString().getBytes(StandardCharsets.US_ASCII);
  }

  /** The final answer's status: interim (1xx) answers are skipped. */
  private static int status(InputStream in) throws IOException {
    int budget = MAX_HEAD_BYTES;
    while (true) {
      String line = line(in, budget);
      budget -= line.length() + 2;
      int status = parseStatus(line);
      if (status >= 200) {
        return status;
      }
      // An interim answer (103 Early Hints, say): its headers end at an empty line.
      for (String header = line(in, budget); !header.isEmpty(); header = line(in, budget)) {
        budget -= header.length() + 2;
      }
    }
  }

  private static int parseStatus(String line) throws IOException {
    String[] parts = line.split(" ", 3);
    if (parts.length < 2
        || !parts[0].toUpperCase(Locale.ROOT).startsWith("HTTP/1.")
        || parts[1].length() != 3
        || !parts[1].chars().allMatch(Character::isDigit)) {
      throw new IOException("not an HTTP/1.x answer");
    }
    return Integer.parseInt(parts[1]);
  }

  /** One line up to CRLF (or LF), at most {@code budget} bytes. */
  private static String line(InputStream in, int budget) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    while (true) {
      int b = in.read();
      if (b == -1) {
        throw new IOException("the connection closed before the answer's status");
      }
      if (b == '\n') {
        byte[] text = bytes.toByteArray();
        int end = text.length > 0 && text[text.length - 1] == '\r' ? text.length - 1 : text.length;
        return new String(text, 0, end, StandardCharsets.ISO_8859_1);
      }
      if (bytes.size() >= budget) {
        throw new IOException("the answer's head is too long");
      }
      bytes.write(b);
    }
  }

  private static int millis(long nanos) {
    return (int) Math.max(1, Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(nanos)));
  }

  private static void close(Socket socket) {
    try {
      socket.close();
    } catch (IOException e) {
      // nothing left to do with it
    }
  }
}
