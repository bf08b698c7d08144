package io.asyncjobs.callbacks;

import io.asyncjobs.config.JobsConfig;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import java.io.IOException;
import java.net.ConnectException;
import java.net.IDN;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.net.http.HttpConnectTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Which {@code callback_url}s an enqueue may ask for: absolute http or https URLs, without user
 * information or fragment, to a host and port {@code jobs.callbacks.allowed-hosts} names (a port in
 * {@code jobs.callbacks.allowed-ports} where the entry names none). The service POSTs to these from
 * inside the cluster, so the list keeps a caller from pointing it anywhere else: a database's port,
 * the cluster's DNS, the internet. The host is looked up once right before each delivery ({@link
 * #checkAddress}), and the delivery connects to what that lookup answered ({@link CallbackPost}); a
 * name matched by a {@code *.suffix} pattern that resolves to an address of the host itself or of
 * the cloud around it ({@link #refusal}) is refused.
 */
@Startup
@ApplicationScoped
public class CallbackUrls {

  /** The longest callback URL taken. */
  public static final int MAX_LENGTH = 2048;

  /**
   * One allowed host: a name, an IP literal or {@code *.suffix}, and a port ({@code :*} for any,
   * none for the allowed ports).
   */
  record Entry(String host, Integer port, boolean anyPort) {

    /**
     * @throws IllegalStateException for an IPv6 address without brackets, whose last group would
     *     read as a port: it stops the service at start, naming the entry
     */
    static Entry parse(String text) {
      String entry = text.trim().toLowerCase(Locale.ROOT);
      int colon = entry.lastIndexOf(':');
      boolean bracketed = entry.startsWith("[");
      if (!bracketed && entry.indexOf(':') != colon) {
        throw new IllegalStateException(
            "jobs.callbacks.allowed-hosts: the entry '"
                + text.trim()
                + "' names an IPv6 address without brackets, so its last group would read as a"
                + " port; write it as ["
                + entry
                + "], or [address]:port for one port");
      }
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
  public interface Resolver {
    /** The addresses of {@code host}, a name. */
    InetAddress[] resolve(String host) throws UnknownHostException;
  }

  private final List<Entry> allowed;
  private final List<Network> networks;
  private final Set<Integer> ports;
  private final boolean keyed;
  private final Resolver resolver;

  /**
   * Made at start, so that an allow-list entry that cannot be read stops the service there.
   *
   * @param resolvers a resolver of the application's (a test's); the system's without one
   */
  @jakarta.inject.Inject
  CallbackUrls(JobsConfig config, Instance<Resolver> resolvers) {
    this(
        config.callbacks().allowedHosts(),
        config.callbacks().allowedNetworks().orElse(List.of()),
        config.callbacks().allowedPorts(),
        config.callbacks().key().isPresent(),
        resolvers.isResolvable() ? resolvers.get() : InetAddress::getAllByName);
  }

  CallbackUrls(List<String> hosts, List<Integer> ports, boolean keyed, Resolver resolver) {
    this(hosts, List.of(), ports, keyed, resolver);
  }

  CallbackUrls(
      List<String> hosts,
      List<String> networks,
      List<Integer> ports,
      boolean keyed,
      Resolver resolver) {
    List<Network> ranges = new ArrayList<>();
    for (String n : networks) {
      if (!n.isBlank()) {
        ranges.add(Network.parse(n));
      }
    }
    this.networks = List.copyOf(ranges);
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
   * Right before a delivery: the addresses to connect to, looked up once by {@code deadlineNanos}
   * ({@link System#nanoTime()}); the delivery connects to one of these and to nothing else, so a
   * name cannot answer one address here and another when the socket connects. For a host matched by
   * a {@code *.suffix} pattern, every address must be one callbacks may go to ({@link #refusal}); a
   * host listed exactly is the operator's own choice and is only looked up.
   *
   * @throws RefusedAddressException saying why
   * @throws HttpConnectTimeoutException when the lookup did not end by the deadline
   * @throws ConnectException when the name does not resolve
   */
  List<InetAddress> checkAddress(URI uri, long deadlineNanos)
      throws RefusedAddressException, IOException, InterruptedException {
    String host = uri.getHost();
    Entry entry = entryFor(host, port(uri));
    if (entry == null) {
      throw new RefusedAddressException("its host is no longer among those allowed");
    }
    String name = normalized(host);
    List<InetAddress> addresses =
        isIpLiteral(name) ? List.of(InetAddress.getByName(name)) : lookUp(name, deadlineNanos);
    if (entry.wildcard()) {
      for (InetAddress a : addresses) {
        String why = refusal(a);
        if (why != null
            && why.startsWith(LIFTABLE)
            && networks.stream().anyMatch(n -> n.holds(a))) {
          why = null; // a range the operator named in jobs.callbacks.allowed-networks
        }
        if (why != null) {
          throw new RefusedAddressException(
              "its host resolves to an address callbacks may not go to (" + why + ")");
        }
      }
    }
    return addresses;
  }

  /**
   * The resolver's answer by the deadline: a lookup is not bounded by any socket timeout, so it
   * runs on a thread of its own and the delivery stops waiting for it at the deadline.
   */
  private List<InetAddress> lookUp(String name, long deadlineNanos)
      throws IOException, InterruptedException {
    Future<InetAddress[]> lookup = LOOKUPS.submit(() -> resolver.resolve(name));
    try {
      InetAddress[] found =
          lookup.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
      if (found.length == 0) {
        throw new ConnectException("the host name resolves to no address");
      }
      return List.of(found);
    } catch (TimeoutException e) {
      lookup.cancel(true);
      throw new HttpConnectTimeoutException("the host name was not resolved within the timeout");
    } catch (ExecutionException e) {
      if (e.getCause() instanceof UnknownHostException) {
        // The delivery fails to connect and is tried again: the name may come back.
        throw new ConnectException("the host name does not resolve");
      }
      throw new IOException("the host name could not be looked up", e.getCause());
    } catch (InterruptedException e) {
      lookup.cancel(true);
      throw e;
    }
  }

  /**
   * Why a name matched by a {@code *.suffix} pattern may not send callbacks to {@code address}, or
   * null. Private networks (10/8, 172.16/12, 192.168/16) are where in-cluster services live and are
   * let through; refused are the addresses of the host itself and of the cloud around it: loopback,
   * wildcard, link-local (169.254.169.254 among them), multicast and reserved, the metadata and
   * platform addresses clouds give outside those ranges (fd00:ec2::254, 100.100.100.200,
   * 168.63.129.16), the shared 100.64.0.0/10, IPv6 unique-local fc00::/7 and site-local, and every
   * IPv6 form that carries an IPv4 address (mapped, compatible, NAT64, 6to4, Teredo), which is
   * judged by the IPv4 address it carries or refused where that cannot be told.
   */
  static String refusal(InetAddress address) {
    byte[] b = address.getAddress();
    if (b.length == 4) {
      return refusalV4(b);
    }
    if (address.isLoopbackAddress() || address.isAnyLocalAddress()) {
      return "loopback or wildcard";
    }
    if (address.isLinkLocalAddress() || address.isSiteLocalAddress()) {
      return "link-local";
    }
    if (address.isMulticastAddress()) {
      return "multicast";
    }
    if (java.util.Arrays.equals(b, AWS_METADATA_V6)) {
      return "a cloud metadata address";
    }
    if ((b[0] & 0xfe) == 0xfc) {
      return LIFTABLE + "IPv6 unique-local";
    }
    if (startsWith(b, NAT64, 12) || startsWith(b, NAT64_LOCAL, 6)) {
      return "NAT64";
    }
    if (startsWith(b, TEREDO, 4)) {
      return "Teredo";
    }
    if (startsWith(b, SIX_TO_FOUR, 2)) {
      String why = refusalV4(java.util.Arrays.copyOfRange(b, 2, 6));
      return why == null ? null : why + ", in a 6to4 address";
    }
    boolean zeros = startsWith(b, new byte[10], 10);
    boolean mapped = zeros && b[10] == (byte) 0xff && b[11] == (byte) 0xff;
    boolean compatible = zeros && b[10] == 0 && b[11] == 0;
    if (mapped || compatible) {
      String why = refusalV4(java.util.Arrays.copyOfRange(b, 12, 16));
      return why == null
          ? null
          : why + ", in an IPv4-" + (mapped ? "mapped" : "compatible") + " address";
    }
    return null;
  }

  private static String refusalV4(byte[] b) {
    int first = b[0] & 0xff;
    int second = b[1] & 0xff;
    if (first == 0 || first == 127) {
      return "loopback or wildcard";
    }
    if (first == 169 && second == 254) {
      return "link-local";
    }
    if (first >= 224) {
      return "multicast or reserved";
    }
    if (java.util.Arrays.equals(b, ALIBABA_METADATA)) {
      return "a cloud metadata address";
    }
    if (first == 100 && (second & 0xc0) == 64) {
      return LIFTABLE + "shared address space 100.64.0.0/10";
    }
    if (first == 192 && second == 0 && b[2] == 0) {
      return "IETF protocol assignments 192.0.0.0/24";
    }
    if (java.util.Arrays.equals(b, AZURE_WIRESERVER)) {
      return "a cloud platform address";
    }
    return null;
  }

  private static boolean startsWith(byte[] address, byte[] prefix, int length) {
    for (int i = 0; i < length; i++) {
      if (address[i] != prefix[i]) {
        return false;
      }
    }
    return true;
  }

  private static byte[] bytes(int... values) {
    byte[] b = new byte[16];
    for (int i = 0; i < values.length; i++) {
      b[i] = (byte) values[i];
    }
    return b;
  }

  /** How a refusal that {@code jobs.callbacks.allowed-networks} may lift begins. */
  private static final String LIFTABLE = "a range refused by default: ";

  /** One range of {@code jobs.callbacks.allowed-networks}: an address and a prefix length. */
  record Network(byte[] address, int bits) {

    /**
     * @throws IllegalStateException naming the entry, which stops the service at start
     */
    static Network parse(String text) {
      String cidr = text.trim();
      int slash = cidr.indexOf('/');
      try {
        if (slash < 0) {
          throw new IllegalArgumentException("no prefix length");
        }
        String host = cidr.substring(0, slash);
        if (!isIpLiteral(host)) {
          throw new IllegalArgumentException("not an IP address");
        }
        byte[] address = InetAddress.getByName(host).getAddress(); // a literal: no lookup
        int bits = Integer.parseInt(cidr.substring(slash + 1));
        if (bits < 0 || bits > address.length * 8) {
          throw new IllegalArgumentException("prefix length out of range");
        }
        return new Network(address, bits);
      } catch (IllegalArgumentException | UnknownHostException e) {
        throw new IllegalStateException(
            "jobs.callbacks.allowed-networks: '"
                + cidr
                + "' is not an address range like fd00:10:96::/112 or 100.64.0.0/16",
            e);
      }
    }

    boolean holds(InetAddress candidate) {
      byte[] b = candidate.getAddress();
      if (b.length != address.length) {
        return false;
      }
      for (int i = 0; i < bits; i++) {
        int mask = 0x80 >> (i % 8);
        if ((b[i / 8] & mask) != (address[i / 8] & mask)) {
          return false;
        }
      }
      return true;
    }
  }

  /** fd00:ec2::254, the metadata service of AWS over IPv6. */
  private static final byte[] AWS_METADATA_V6 =
      bytes(0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54);

  /** 100.100.100.200, Alibaba Cloud's metadata service, inside 100.64.0.0/10. */
  private static final byte[] ALIBABA_METADATA = {100, 100, 100, (byte) 200};

  /** 168.63.129.16, Azure's platform address (WireServer, its DNS and health probes). */
  private static final byte[] AZURE_WIRESERVER = {(byte) 168, 63, (byte) 129, 16};

  /** 64:ff9b::/96, the well-known NAT64 prefix. */
  private static final byte[] NAT64 = bytes(0, 0x64, 0xff, 0x9b);

  /** 64:ff9b:1::/48, the local-use NAT64 prefix. */
  private static final byte[] NAT64_LOCAL = bytes(0, 0x64, 0xff, 0x9b, 0, 1);

  /** 2001::/32, Teredo. */
  private static final byte[] TEREDO = bytes(0x20, 0x01, 0, 0);

  /** 2002::/16, 6to4. */
  private static final byte[] SIX_TO_FOUR = bytes(0x20, 0x02);

  /** Lookups run here, so that a delivery can stop waiting for one. */
  private static final ExecutorService LOOKUPS =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "jobs-callbacks-lookup");
            t.setDaemon(true);
            return t;
          });

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

  static int port(URI uri) {
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

  /**
   * A host without its trailing dot or brackets; an IPv6 literal in one spelling ({@code fd00::5}
   * and {@code fd00:0::5} are one address).
   */
  static String bare(String host) {
    String name = host;
    if (name.endsWith(".")) {
      name = name.substring(0, name.length() - 1);
    }
    if (name.startsWith("[") && name.endsWith("]")) {
      name = name.substring(1, name.length() - 1);
      try {
        if (name.indexOf(':') < 0) {
          return name; // not an IPv6 literal: left as written, and it matches nothing
        }
        name = InetAddress.getByName(name).getHostAddress(); // a literal: no lookup
      } catch (UnknownHostException | SecurityException e) {
        // not an IPv6 literal: left as written, and it matches nothing
      }
    }
    return name;
  }

  /** Whether {@code host} (without brackets) is an IP address rather than a name. */
  static boolean isIpLiteral(String host) {
    return host.indexOf(':') >= 0 || IPV4.matcher(host).matches();
  }

  private static final java.util.regex.Pattern IPV4 =
      java.util.regex.Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");
}
