package io.asyncjobs.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One HTTP/1.1 request written byte by byte to a socket, for what ordinary clients will not send: a
 * chunked body of a chosen size, a header with an empty or blank value, a body without {@code
 * Content-Type}. The body is written on its own thread, so a server that answers early (and stops
 * reading) still has its answer read.
 */
public final class RawHttp {

  private RawHttp() {}

  /**
   * What the server answered. Header names are lower case; {@code closed} says whether the server,
   * having answered with {@code Connection: close}, closed the connection within 5 s.
   */
  public record Answer(int status, Map<String, String> headers, String body, boolean closed) {}

  /**
   * Sends {@code head} (request line and headers, without the blank line that ends them) to the
   * server at {@code base}, then {@code body} in chunks of 64 KiB when {@code chunked}, or as it
   * is.
   */
  public static Answer send(URI base, String head, byte[] body, boolean chunked)
      throws IOException, InterruptedException {
    try (Socket socket = new Socket(base.getHost(), base.getPort())) {
      socket.setSoTimeout(30_000);
      OutputStream out = socket.getOutputStream();
      Thread writer =
          new Thread(
              () -> {
                try {
                  out.write((head + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
                  if (chunked) {
                    for (int at = 0; at < body.length; at += 65_536) {
                      int n = Math.min(65_536, body.length - at);
                      out.write(
                          (Integer.toHexString(n) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                      out.write(body, at, n);
                      out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                    }
                    out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                  } else {
                    out.write(body);
                  }
                  out.flush();
                } catch (IOException e) {
                  // The server answered and closed before the whole body was sent: expected when
                  // it refuses the body; the answer is read below.
                }
              },
              "raw-http-writer");
      writer.setDaemon(true);
      writer.start();
      Answer answer = read(socket.getInputStream());
      boolean closed = false;
      if ("close".equalsIgnoreCase(answer.headers().get("connection"))) {
        socket.setSoTimeout(5_000);
        try {
          closed = socket.getInputStream().read() == -1;
        } catch (java.net.SocketTimeoutException e) {
          closed = false;
        } catch (IOException e) {
          closed = true; // reset: closed with the rest of the body unread
        }
      }
      writer.join(10_000);
      return new Answer(answer.status(), answer.headers(), answer.body(), closed);
    }
  }

  private static Answer read(InputStream in) throws IOException {
    String statusLine = line(in);
    if (statusLine == null) {
      throw new IOException("the server closed the connection without an answer");
    }
    int status = Integer.parseInt(statusLine.split(" ")[1]);
    Map<String, String> headers = new LinkedHashMap<>();
    for (String line = line(in); line != null && !line.isEmpty(); line = line(in)) {
      int colon = line.indexOf(':');
      headers.put(
          line.substring(0, colon).trim().toLowerCase(Locale.ROOT),
          line.substring(colon + 1).trim());
    }
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    if (headers.containsKey("content-length")) {
      body.write(in.readNBytes(Integer.parseInt(headers.get("content-length"))));
    } else if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
      for (int size = Integer.parseInt(line(in).trim(), 16); size > 0; ) {
        body.write(in.readNBytes(size));
        line(in);
        size = Integer.parseInt(line(in).trim(), 16);
      }
    }
    return new Answer(status, headers, body.toString(StandardCharsets.UTF_8), false);
  }

  private static String line(InputStream in) throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    for (int b = in.read(); b != -1; b = in.read()) {
      if (b == '\n') {
        String text = line.toString(StandardCharsets.ISO_8859_1);
        return text.endsWith("\r") ? text.substring(0, text.length() - 1) : text;
      }
      line.write(b);
    }
    return line.size() == 0 ? null : line.toString(StandardCharsets.ISO_8859_1);
  }
}
