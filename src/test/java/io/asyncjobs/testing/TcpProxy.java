package io.asyncjobs.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP proxy on 127.0.0.1 that a test can cut and restore, to take a server away from some of its
 * clients while it keeps its state. Cut, it closes every open connection and every new one at once
 * (as a refusing firewall would); restored, it forwards again. Slowed, it holds back every answer.
 */
public final class TcpProxy implements AutoCloseable {

  private final ServerSocket server;
  private final InetSocketAddress target;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private volatile boolean cut;
  private volatile long delayMillis;
  private volatile boolean closed;

  /** Starts forwarding from a free loopback port to {@code targetPort} on 127.0.0.1. */
  public TcpProxy(int targetPort) throws IOException {
    this.target = new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort);
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::acceptLoop, "tcp-proxy-" + server.getLocalPort());
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** The port clients connect to. */
  public int port() {
    return server.getLocalPort();
  }

  /** Closes every connection and refuses new ones until {@link #restore()}. */
  public void cut() {
    cut = true;
    for (Socket socket : open) {
      closeQuietly(socket);
    }
    open.clear();
  }

  /** Forwards again, without delay. */
  public void restore() {
    cut = false;
    delayMillis = 0;
  }

  /** Holds every chunk of every answer for {@code delay} before passing it on: a slow server. */
  public void slow(java.time.Duration delay) {
    delayMillis = delay.toMillis();
  }

  @Override
  public void close() {
    closed = true;
    cut();
    closeQuietly(server);
  }

  private void acceptLoop() {
    while (!closed) {
      try {
        Socket client = server.accept();
        if (cut) {
          closeQuietly(client);
          continue;
        }
        Socket upstream = new Socket();
        upstream.connect(target, 2_000);
        open.add(client);
        open.add(upstream);
        pump(client, upstream, false);
        pump(upstream, client, true);
      } catch (IOException e) {
        if (closed) {
          return;
        }
      }
    }
  }

  private void pump(Socket from, Socket to, boolean answers) {
    Thread thread =
        new Thread(
            () -> {
              byte[] buffer = new byte[16 * 1024];
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                  long delay = delayMillis;
                  if (answers && delay > 0) {
                    Thread.sleep(delay);
                  }
                  out.write(buffer, 0, n);
                  out.flush();
                }
              } catch (IOException e) {
                // cut, or one side closed
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              } finally {
                closeQuietly(from);
                closeQuietly(to);
                open.remove(from);
                open.remove(to);
              }
            },
            "tcp-proxy-pump");
    thread.setDaemon(true);
    thread.start();
  }

  private static void closeQuietly(AutoCloseable closeable) {
    try {
      closeable.close();
    } catch (Exception e) {
      // nothing to do
    }
  }
}
