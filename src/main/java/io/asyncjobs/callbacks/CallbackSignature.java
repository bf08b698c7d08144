package io.asyncjobs.callbacks;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The signature a callback carries in {@value #HEADER}: {@code t=<unix seconds>,v1=<hex HMAC-SHA256
 * of "<t>.<body>">}, under the deployment's key. A receiver recomputes it over the raw body with
 * the same key, compares in constant time, and refuses a {@code t} too far from its own clock,
 * which stops a captured delivery from being replayed later.
 */
public final class CallbackSignature {

  /** The header that carries the signature. */
  public static final String HEADER = "X-Async-Jobs-Signature";

  private static final String ALGORITHM = "HmacSHA256";

  private final SecretKeySpec key;

  /** A signer with {@code key}, the decoded bytes of {@code jobs.callbacks.key}. */
  public CallbackSignature(byte[] key) {
    this.key = new SecretKeySpec(key, ALGORITHM);
  }

  /** The header's value for {@code body} sent at {@code unixSeconds}. */
  public String sign(long unixSeconds, byte[] body) {
    return "t=" + unixSeconds + ",v1=" + HexFormat.of().formatHex(mac(unixSeconds, body));
  }

  private byte[] mac(long unixSeconds, byte[] body) {
    try {
      Mac mac = Mac.getInstance(ALGORITHM);
      mac.init(key);
      mac.update((unixSeconds + ".").getBytes(StandardCharsets.US_ASCII));
      return mac.doFinal(body);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is not available", e);
    }
  }
}
