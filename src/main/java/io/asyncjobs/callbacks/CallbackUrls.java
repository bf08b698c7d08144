package io.asyncjobs.callbacks;

import io.asyncjobs.config.JobsConfig;
import jakarta.enterprise.context.ApplicationScoped;
import java.net.IDN;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;
import java.util.Locale;

/**
 * Which {@code callback_url}s an enqueue may ask for: absolute http or https URLs, without user
 * information or fragment, to a host {@code jobs.callbacks.allowed-hosts} names. The service POSTs
 * to these from inside the cluster, so the list keeps a caller from pointing it anywhere else (the
 * cloud's metadata address, a database port, the internet).
 */
@ApplicationScoped
public class CallbackUrls {

  /** The longest callback URL taken. */
  public static final int MAX_LENGTH = 2048;

  private final List<String> allowed;
  private final boolean keyed;

  CallbackUrls(JobsConfig config) {
    this.allowed =
        config.callbacks().allowedHosts().stream()
            .map(String::trim)
            .filter(h -> !h.isEmpty())
            .map(h -> h.toLowerCase(Locale.ROOT))
            .toList();
    this.keyed = config.callbacks().key().isPresent();
  }

  /**
   * {@code url} as stored, checked.
   *
   * @throws IllegalArgumentException naming what is wrong, in words a caller can act on
   */
  public String check(String url) {
    if (!keyed) {
      throw new IllegalArgumentException(
          "this deployment sends no callbacks (jobs.callbacks.key is not set); leave callback_url"
              + " out");
    }
    String text = url.trim();
    if (text.isEmpty() || text.length() > MAX_LENGTH) {
      throw new IllegalArgumentException(
          "callback_url must be an http or https URL of 1 to " + MAX_LENGTH + " characters");
    }
    URI uri;
    try {
      uri = new URI(text);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("callback_url is not a URL: " + e.getReason());
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!uri.isAbsolute() || !(scheme.equals("http") || scheme.equals("https"))) {
      throw new IllegalArgumentException("callback_url must be an absolute http or https URL");
    }
    if (uri.getRawUserInfo() != null || uri.getRawFragment() != null) {
      throw new IllegalArgumentException(
          "callback_url must not carry user information or a fragment");
    }
    String host = uri.getHost();
    if (host == null || host.isEmpty()) {
      throw new IllegalArgumentException("callback_url must name a host");
    }
    if (!allowed(host)) {
      throw new IllegalArgumentException(
          "callback_url's host "
              + host
              + " is not among the hosts callbacks may go to ("
              + String.join(", ", allowed)
              + ")");
    }
    return text;
  }

  /** Whether {@code host} matches an allowed name exactly, or a {@code *.suffix} pattern. */
  boolean allowed(String host) {
    String name = host.toLowerCase(Locale.ROOT);
    if (name.endsWith(".")) {
      name = name.substring(0, name.length() - 1);
    }
    if (name.startsWith("[") && name.endsWith("]")) {
      name = name.substring(1, name.length() - 1);
    } else {
      try {
        name = IDN.toASCII(name).toLowerCase(Locale.ROOT);
      } catch (IllegalArgumentException e) {
        return false;
      }
    }
    for (String pattern : allowed) {
      if (pattern.startsWith("*.")) {
        String suffix = pattern.substring(1);
        if (name.endsWith(suffix) && name.length() > suffix.length()) {
          return true;
        }
      } else if (pattern.equals(name)) {
        return true;
      }
    }
    return false;
  }
}
