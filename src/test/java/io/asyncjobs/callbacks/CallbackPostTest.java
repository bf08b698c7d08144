package io.asyncjobs.callbacks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.FileInputStream;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.ExtendedSSLSession;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The POST connects to the address it is given, never to a lookup of its own, and keeps TLS under
 * the URL's name: SNI names it and the certificate must match it. A receiver on loopback with a
 * certificate for {@code receiver.test}, a name no resolver knows.
 */
class CallbackPostTest {

  private static final char[] PASSWORD = "changeit".toCharArray();
  private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

  private static SSLContext server;
  private static CallbackPost post;

  @BeforeAll
  static void certificate() throws Exception {
    Path dir = Files.createDirectories(Path.of("target", "callback-post-test"));
    Path store = dir.resolve("receiver.p12");
    Files.deleteIfExists(store);
    Process keytool =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair",
                "-alias",
                "receiver",
                "-keyalg",
                "EC",
                "-groupname",
                "secp256r1",
                "-dname",
                "CN=receiver.test",
                "-ext",
                "san=dns:receiver.test",
                "-validity",
                "2",
                "-storetype",
                "PKCS12",
                "-keystore",
                store.toString(),
                "-storepass",
                "changeit")
            .redirectErrorStream(true)
            .start();
    assertThat(keytool.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(keytool.exitValue())
        .as(new String(keytool.getInputStream().readAllBytes()))
        .isZero();
    KeyStore keys = KeyStore.getInstance("PKCS12");
    try (InputStream in = new FileInputStream(store.toFile())) {
      keys.load(in, PASSWORD);
    }
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(keys, PASSWORD);
    server = SSLContext.getInstance("TLS");
    server.init(kmf.getKeyManagers(), null, null);
    KeyStore trusted = KeyStore.getInstance("PKCS12");
    trusted.load(null, null);
    trusted.setCertificateEntry("receiver", keys.getCertificate("receiver"));
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trusted);
    SSLContext client = SSLContext.getInstance("TLS");
    client.init(null, tmf.getTrustManagers(), null);
    post = new CallbackPost(client.getSocketFactory());
  }

  /** What the receiver saw of one request. */
  record Seen(String sni, String head) {}

  @Test
  void shouldSpeakTlsUnderTheUrlsNameToTheAddressItWasGiven() throws Exception {
    try (SSLServerSocket listener =
        (SSLServerSocket) server.getServerSocketFactory().createServerSocket(0, 1, LOOPBACK)) {
      CompletableFuture<Seen> seen = answerOnce(listener, "HTTP/1.1 204 No Content\r\n\r\n");
      int port = listener.getLocalPort();

      int status =
          post.send(
              URI.create("https://receiver.test:" + port + "/hooks/done?team=a"),
              List.of(LOOPBACK),
              Map.of("X-Async-Jobs-Delivery", "u/1"),
              "{}".getBytes(StandardCharsets.UTF_8),
              deadline(Duration.ofSeconds(10)));

      assertThat(status).isEqualTo(204);
      Seen got = seen.get(10, TimeUnit.SECONDS);
      assertThat(got.sni()).isEqualTo("receiver.test");
      assertThat(got.head())
          .startsWith("POST /hooks/done?team=a HTTP/1.1\r\n")
          .contains("Host: receiver.test:" + port + "\r\n")
          .contains("X-Async-Jobs-Delivery: u/1\r\n")
          .contains("Content-Length: 2\r\n");
    }
  }

  @Test
  void shouldRefuseACertificateThatDoesNotNameTheUrlsHost() throws Exception {
    // The address is the receiver's, but the URL names another host: connecting to the checked
    // address must not let a certificate for one name stand for another.
    try (SSLServerSocket listener =
        (SSLServerSocket) server.getServerSocketFactory().createServerSocket(0, 1, LOOPBACK)) {
      answerOnce(listener, "HTTP/1.1 204 No Content\r\n\r\n");
      URI other = URI.create("https://other.test:" + listener.getLocalPort() + "/hook");

      assertThatThrownBy(
              () ->
                  post.send(
                      other,
                      List.of(LOOPBACK),
                      Map.of(),
                      new byte[0],
                      deadline(Duration.ofSeconds(10))))
          .isInstanceOf(SSLHandshakeException.class);
    }
  }

  @Test
  void shouldGiveUpOnAReceiverThatNeverAnswersByTheDeadline() throws Exception {
    try (ServerSocket silent = new ServerSocket(0, 1, LOOPBACK)) {
      CompletableFuture.runAsync(
          () -> {
            try (Socket s = silent.accept()) {
              s.getInputStream().readAllBytes(); // reads and never answers
            } catch (Exception e) {
              // closed by the test
            }
          });
      long begin = System.nanoTime();

      assertThatThrownBy(
              () ->
                  post.send(
                      URI.create("http://receiver.test:" + silent.getLocalPort() + "/hook"),
                      List.of(LOOPBACK),
                      Map.of(),
                      new byte[0],
                      deadline(Duration.ofMillis(500))))
          .isInstanceOf(HttpTimeoutException.class);
      assertThat(Duration.ofNanos(System.nanoTime() - begin)).isLessThan(Duration.ofSeconds(2));
    }
  }

  /** Serves one request on {@code listener}: reads its head and body, answers {@code answer}. */
  private static CompletableFuture<Seen> answerOnce(SSLServerSocket listener, String answer) {
    return CompletableFuture.supplyAsync(
        () -> {
          try (SSLSocket s = (SSLSocket) listener.accept()) {
            s.startHandshake();
            List<?> names = ((ExtendedSSLSession) s.getSession()).getRequestedServerNames();
            String sni = names.isEmpty() ? null : ((SNIHostName) names.get(0)).getAsciiName();
            InputStream in = s.getInputStream();
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
              int b = in.read();
              if (b < 0) {
                break;
              }
              head.write(b);
            }
            String text = head.toString(StandardCharsets.ISO_8859_1);
            int length =
                text.lines()
                    .filter(l -> l.startsWith("Content-Length: "))
                    .map(l -> Integer.parseInt(l.substring(16)))
                    .findFirst()
                    .orElse(0);
            in.readNBytes(length);
            s.getOutputStream().write(answer.getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            return new Seen(sni, text);
          } catch (Exception e) {
            return new Seen(null, e.toString());
          }
        });
  }

  private static long deadline(Duration d) {
    return System.nanoTime() + d.toNanos();
  }
}
