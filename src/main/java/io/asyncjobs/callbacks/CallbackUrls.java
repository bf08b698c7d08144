package io.asyncjobs.callbacks;

import io.asyncjobs.config.JobsConfig;
import jakarta.enterprise.context.ApplicationScoped;
import java.net.IDN;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Which {@code callback_url}s an enqueue may ask for: absolute http or https URLs, without user
 * information or fragment, to a host and port {@code jobs.callbacks.allowed-hosts} names (a port in
 * {@code jobs.callbacks.allowed-ports} where the entry names none). The service POSTs to these from
 * inside the cluster, so the list keeps a caller from pointing it anywhere else: a database's port,
 * the cluster's DNS, the internet. A name matched by a {@code *.suffix} pattern is resolved again
 * right before each delivery ({@link #checkAddress}), and one that resolves to a loopback,
 * link-local (the cloud's metadata address), wildcard or multicast address is refused.
 */
@ApplicationScoped
public class CallbackUrls {

  /** The longest callback URL taken. */
  public static final int MAX_LENGTH = 2048;

  /**
   * One allowed host: a name, an IP literal or {@code *.suffix}, and a port ({@code :*} for any,
   * none for the allowed ports).
   */
  record Entry(String host, Integer port, boolean anyPort) {

    static Entry parse(String text) {
      String entry = text.trim().toLowerCase(Locale.ROOT);
      int colon = entry.lastIndexOf(':');
      boolean bracketed = entry.startsWith("[");
      if (colon > 0 && (!bracketed || entry.lastIndexOf(']') < colon)) {
        String port = entry.substring(colon + 1);
        if (port.equals("*")) {
          return new Entry(bare(entry.substring(0, colon)), null, true);
        }
        if (!port.isEmpty() && port.chars().allMatch(Character::isDigit)) {
          return new Entry(bare(entry.substring(0, colon)), Integer.valueOf(port), false);
        }
      }
      return new Entry(bare(entry), null, false);
    }

    boolean wildcard() {
      return host.startsWith("*.");
    }

    boolean matches(String name) {
      if (wildcard()) {
        String suffix = host.substring(1);
        return name.endsWith(suffix) && name.length() > suffix.length();
      }
      return host.equals(name);
    }

    @Override
    public String toString() {
      return anyPort ? host + ":*" : port == null ? host : host + ":" + port;
    }
  }

  /** Looks up a host's addresses; the system's resolver, or a test's. */
  interface Resolver {
    InetAddress[] resolve(String host) throws UnknownHostException;
  }

  private final List<Entry> allowed;
  private final Set<Integer> ports;
  private final boolean keyed;
  private final Resolver resolver;

  @jakarta.inject.Inject
  CallbackUrls(JobsConfig config) {
    this(
        config.callbacks().allowedHosts(),
        config.callbacks().allowedPorts(),
        config.callbacks().key().isPresent(),
        InetAddress::getAllByName);
  }

  CallbackUrls(List<String> hosts, List<Integer> ports, boolean keyed, Resolver resolver) {
    List<Entry> entries = new ArrayList<>();
    for (String h : hosts) {
      if (!h.isBlank()) {
        entries.add(Entry.parse(h));
      }
    }
    this.allowed = List.copyOf(entries);
    this.ports = Set.copyOf(ports);
    this.keyed = keyed;
    this.resolver = resolver;
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
    int port = port(uri);
    if (entryFor(host, port) == null) {
      throw new IllegalArgumentException(
          "callback_url's host and port "
              + host
              + ":"
              + port
              + " are not among those callbacks may go to ("
              + String.join(", ", allowed.stream().map(Entry::toString).toList())
              + "; ports "
              + ports.stream().sorted().map(String::valueOf).toList()
              + " where an entry names none)");
    }
    return text;
  }

  /**
   * Right before a delivery: refuses a URL whose host, matched by a {@code *.suffix} pattern,
   * resolves to a loopback, link-local, wildcard or multicast address (or not at all). A host
   * listed exactly is the operator's own choice and is not checked.
   *
   * @throws RefusedAddressException saying why
   */
  void checkAddress(URI uri) throws RefusedAddressException {
    String host = uri.getHost();
    Entry entry = entryFor(host, port(uri));
    if (entry == null) {
      throw new RefusedAddressException("its host is no longer among those allowed");
    }
    if (!entry.wildcard()) {
      return;
    }
    InetAddress[] addresses;
    try {
      addresses = resolver.resolve(host);
    } catch (UnknownHostException e) {
      return; // the delivery fails to connect and is tried again: the name may come back
    }
    for (InetAddress a : addresses) {
      if (a.isLoopbackAddress()
          || a.isLinkLocalAddress()
          || a.isAnyLocalAddress()
          || a.isMulticastAddress()) {
        throw new RefusedAddressException(
            "its host resolves to an address callbacks may not go to (loopback, link-local,"
                + " wildcard or multicast)");
      }
    }
  }

  /** A callback URL the service will not call, whatever the receiver would answer. */
  static final class RefusedAddressException extends Exception {
    private static final long serialVersionUID = 1L;

    RefusedAddressException(String message) {
      super(message);
    }
  }

  /** The entry allowing {@code host} on {@code port}, or null. */
  private Entry entryFor(String host, int port) {
    String name = normalized(host);
    if (name == null) {
      return null;
    }
    for (Entry entry : allowed) {
      boolean portAllowed =
          entry.anyPort() || (entry.port() == null ? ports.contains(port) : entry.port() == port);
      if (entry.matches(name) && portAllowed) {
        return entry;
      }
    }
    return null;
  }

  private static int port(URI uri) {
    if (uri.getPort() != -1) {
      return uri.getPort();
    }
    return "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
  }

  /** A host in the form entries use: lower case, no trailing dot or brackets, IDN as ASCII. */
  private static String normalized(String host) {
    if (host == null) {
      return null;
    }
    String name = bare(host.toLowerCase(Locale.ROOT));
    if (host.startsWith("[")) {
      return name;
    }
    try {
      return IDN.toASCII(name).toLowerCase(Locale.ROOT);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  private static String bare(String host) {
    String name = host;
    if (name.endsWith(".")) {
      name = name.substring(0, name.length() - 1);
    }
    if (name.startsWith("[") && name.endsWith("]")) {
      name = name.substring(1, name.length() - 1);
    }
    return name;
  }
}
