package io.asyncjobs.auth;

import io.asyncjobs.config.JobsConfig;
import io.asyncjobs.time.Clock;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.Base64;
import java.util.UUID;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Signed download links: {@code /api/jobs/<uid>/download?expires=<epoch seconds>&sig=<HMAC>}. The
 * signature covers the uid and the expiry, so a link works without the Authorization header (a
 * browser can follow it) until it expires, and only for that job. Made at start, so a key that
 * cannot be used stops the service there rather than failing every status request later.
 */
@Startup
@ApplicationScoped
public class DownloadLinks {

  private static final Logger LOG = Logger.getLogger(DownloadLinks.class);
  private static final String ALGORITHM = "HmacSHA256";
  private static final int MIN_KEY_BYTES = 32;

  private final SecretKeySpec key;
  private final ThreadLocal<Mac> macs = ThreadLocal.withInitial(this::newMac);
  private final JobsConfig config;
  private final Clock clock;

  DownloadLinks(
      JobsConfig config,
      Clock clock,
      @ConfigProperty(name = "quarkus.http.host-enabled", defaultValue = "true") boolean serving) {
    this.config = config;
    this.clock = clock;
    this.key = new SecretKeySpec(keyBytes(config, serving), ALGORITHM);
  }

  /**
   * The configured key, checked; without one, a random key (and a warning where links are made).
   */
  private static byte[] keyBytes(JobsConfig config, boolean serving) {
    if (config.api().signingKey().isPresent()) {
      return decodeKey(config.api().signingKey().get(), "jobs.api.signing-key");
    }
    if (serving) {
      // An admin CLI run (no HTTP listener) hands out no links: nothing to warn about.
      LOG.warn(
          "jobs.api.signing-key is not set: download links are signed with a random key and work"
              + " only on this replica until it restarts. Set the same key on every replica.");
    }
    byte[] bytes = new byte[MIN_KEY_BYTES];
    new SecureRandom().nextBytes(bytes);
    return bytes;
  }

  /**
   * An HMAC key from configuration: base64 of at least {@value #MIN_KEY_BYTES} bytes.
   *
   * @param property the key's name, for the message that stops the service otherwise
   * @throws IllegalStateException naming {@code property} when the value is not such a key
   */
  public static byte[] decodeKey(String value, String property) {
    byte[] bytes;
    try {
      bytes = Base64.getDecoder().decode(value.trim());
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException(property + " must be base64", e);
    }
    if (bytes.length < MIN_KEY_BYTES) {
      throw new IllegalStateException(
          property + " must decode to at least " + MIN_KEY_BYTES + " bytes");
    }
    return bytes;
  }

  /** A link to the job's download, valid for {@code jobs.api.download-link-ttl} from now. */
  public SignedLink sign(UUID uid) {
    long expires = clock.now().plus(config.api().downloadLinkTtl()).getEpochSecond();
    String url =
        "/api/jobs/" + uid + "/download?expires=" + expires + "&sig=" + signature(uid, expires);
    return new SignedLink(url, Instant.ofEpochSecond(expires));
  }

  /**
   * Whether {@code sig} is this service's signature of the uid and expiry and the expiry is still
   * ahead. Compared in constant time.
   */
  public boolean verify(UUID uid, long expires, String sig) {
    if (sig == null || clock.now().getEpochSecond() >= expires) {
      return false;
    }
    byte[] expected = signature(uid, expires).getBytes(StandardCharsets.US_ASCII);
    return MessageDigest.isEqual(expected, sig.getBytes(StandardCharsets.US_ASCII));
  }

  private String signature(UUID uid, long expires) {
    Mac mac = macs.get();
    byte[] digest = mac.doFinal((uid + "." + expires).getBytes(StandardCharsets.US_ASCII));
    return Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
  }

  /** A keyed Mac; looking one up is far dearer than using it, so each thread keeps its own. */
  private Mac newMac() {
    try {
      Mac mac = Mac.getInstance(ALGORITHM);
      mac.init(key);
      return mac;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HMAC-SHA256 is not available", e);
    }
  }

  /**
   * A signed link and when it stops working.
   *
   * @param url the path and query, relative to the service's origin
   * @param expiresAt the first instant the link is refused
   */
  public record SignedLink(String url, Instant expiresAt) {}
}
