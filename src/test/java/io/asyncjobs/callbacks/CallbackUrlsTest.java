package io.asyncjobs.callbacks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What a callback may point at: hosts and ports from the allow list, and, for a name a wildcard
 * lets in, only addresses that are not the host's own or the cloud's around it (loopback,
 * link-local, metadata and the like) when it is resolved right before the delivery.
 */
class CallbackUrlsTest {

  /** builds.ci.svc is an ordinary service; the others resolve where no callback may go. */
  private static final Map<String, String> DNS =
      Map.of(
          "builds.ci.svc", "10.96.0.12",
          "sneaky.team.svc", "127.0.0.1",
          "metadata.team.svc", "169.254.169.254",
          "v6.team.svc", "::1",
          "ops-box", "127.0.0.1");

  private final CallbackUrls urls =
      new CallbackUrls(
          List.of("*.svc", "*.svc.cluster.local", "ops-box", "hooks.example.org:9000"),
          List.of(80, 443, 8080, 8443),
          true,
          CallbackUrlsTest::resolve);

  @Test
  void shouldTakeAllowedHostsOnAllowedPortsOnly() {
    assertThat(urls.check("http://builds.ci.svc/hook")).isEqualTo("http://builds.ci.svc/hook");
    assertThat(urls.check("https://builds.ci.svc.cluster.local:8443/hook")).isNotNull();
    assertThat(urls.check("http://hooks.example.org:9000/x")).isNotNull();
    for (String refused :
        List.of(
            "http://postgres.db.svc.cluster.local:5432/",
            "http://kube-dns.kube-system.svc:53/",
            "http://hooks.example.org/x",
            "http://hooks.example.org:9001/x",
            "http://example.com/",
            "http://169.254.169.254/latest/meta-data")) {
      assertThatThrownBy(() -> urls.check(refused))
          .as(refused)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("are not among those callbacks may go to");
    }
  }

  @Test
  void shouldRefuseAWildcardNameThatResolvesToLoopbackOrMetadata() {
    assertThatCode(() -> urls.checkAddress(URI.create("http://builds.ci.svc/hook"), soon()))
        .doesNotThrowAnyException();
    for (String host : List.of("sneaky.team.svc", "metadata.team.svc", "v6.team.svc")) {
      URI uri = URI.create("http://" + host + "/hook");
      assertThat(urls.check(uri.toString())).as("taken at enqueue: not resolved then").isNotNull();
      assertThatThrownBy(() -> urls.checkAddress(uri, soon()))
          .as(host)
          .isInstanceOf(CallbackUrls.RefusedAddressException.class)
          .hasMessageContaining("resolves to an address callbacks may not go to");
    }
    assertThatCode(() -> urls.checkAddress(URI.create("http://ops-box/hook"), soon()))
        .as("a host the operator listed by name is taken as written")
        .doesNotThrowAnyException();
  }

  @Test
  void shouldRefuseCloudMetadataAndTheRangesAroundTheHostWhateverTheirSpelling() throws Exception {
    // Each of these is where a wildcard name must not send a callback: metadata services outside
    // link-local, IPv6 unique-local, shared address space, and IPv6 forms that carry a refused
    // IPv4 address (built as IPv6 objects, as a resolver may hand them over).
    Map<String, InetAddress> refused = new java.util.LinkedHashMap<>();
    refused.put("aws-v6", InetAddress.getByName("fd00:ec2::254"));
    refused.put("alibaba", InetAddress.getByName("100.100.100.200"));
    refused.put("azure", InetAddress.getByName("168.63.129.16"));
    refused.put("ula", InetAddress.getByName("fd12:3456::1"));
    refused.put("cgnat", InetAddress.getByName("100.64.0.1"));
    refused.put("nat64", InetAddress.getByName("64:ff9b::a9fe:a9fe"));
    refused.put("mapped", v6("::ffff:127.0.0.1"));
    refused.put("mapped-metadata", v6("::ffff:169.254.169.254"));
    refused.put("compatible", v6("::127.0.0.1"));
    refused.put("6to4", InetAddress.getByName("2002:a9fe:a9fe::1"));
    refused.put("this-network", InetAddress.getByName("0.1.2.3"));
    for (Map.Entry<String, InetAddress> e : refused.entrySet()) {
      CallbackUrls one =
          new CallbackUrls(
              List.of("*.svc"), List.of(80), true, h -> new InetAddress[] {e.getValue()});
      assertThatThrownBy(() -> one.checkAddress(URI.create("http://x.team.svc/hook"), soon()))
          .as(e.getKey() + " " + e.getValue())
          .isInstanceOf(CallbackUrls.RefusedAddressException.class)
          .hasMessageContaining("resolves to an address callbacks may not go to");
    }
    for (String allowed : List.of("10.96.0.12", "172.20.0.5", "192.168.1.9", "2600:1f18::5")) {
      CallbackUrls one =
          new CallbackUrls(
              List.of("*.svc"),
              List.of(80),
              true,
              h -> new InetAddress[] {InetAddress.getByName(allowed)});
      assertThatCode(() -> one.checkAddress(URI.create("http://x.team.svc/hook"), soon()))
          .as(allowed)
          .doesNotThrowAnyException();
    }
  }

  @Test
  void shouldRefuseAnUnbracketedIpv6EntryAtStartAndTakeABracketedOne() {
    // fd00::5 would read as host "fd00:" on port 5: the service would start with an entry that
    // allows nothing the operator meant.
    assertThatThrownBy(
            () ->
                new CallbackUrls(List.of("fd00::5"), List.of(80), true, CallbackUrlsTest::resolve))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("'fd00::5'")
        .hasMessageContaining("[fd00::5]");
    CallbackUrls v6 =
        new CallbackUrls(
            List.of("[fd00::5]", "[fd00::6]:9000"), List.of(80), true, CallbackUrlsTest::resolve);
    assertThat(v6.check("http://[fd00::5]/hook")).isNotNull();
    assertThat(v6.check("http://[fd00:0:0::5]:80/hook")).as("another spelling").isNotNull();
    assertThat(v6.check("http://[fd00::6]:9000/hook")).isNotNull();
    assertThatThrownBy(() -> v6.check("http://[fd00::6]/hook"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void shouldLetARangeTheOperatorNamedThroughButNeverAMetadataAddress() throws Exception {
    // An IPv6 cluster whose services have unique-local addresses names its service range.
    Map<String, String> dns =
        Map.of(
            "hooks.team.svc", "fd00:10:96::2a",
            "other.team.svc", "fd00:10:97::2a",
            "meta.team.svc", "fd00:ec2::254",
            "pods.team.svc", "100.64.3.4",
            "ali.team.svc", "100.100.100.200");
    CallbackUrls urls =
        new CallbackUrls(
            List.of("*.svc"),
            List.of("fd00:10:96::/112", "[fd00:ec2::]/32", "100.64.0.0/10"),
            List.of(80),
            true,
            h -> new InetAddress[] {InetAddress.getByName(dns.get(h))});
    for (String ok : List.of("hooks.team.svc", "pods.team.svc")) {
      assertThat(urls.checkAddress(URI.create("http://" + ok + "/h"), soon()))
          .as(ok)
          .containsExactly(InetAddress.getByName(dns.get(ok)));
    }
    for (String refused : List.of("other.team.svc", "meta.team.svc", "ali.team.svc")) {
      assertThatThrownBy(() -> urls.checkAddress(URI.create("http://" + refused + "/h"), soon()))
          .as(refused)
          .isInstanceOf(CallbackUrls.RefusedAddressException.class);
    }
    assertThatThrownBy(
            () ->
                new CallbackUrls(List.of("*.svc"), List.of("fd00::"), List.of(80), true, h -> null))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("jobs.callbacks.allowed-networks: 'fd00::'");
  }

  /** A deadline no lookup of these tests comes near. */
  private static long soon() {
    return System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
  }

  private static InetAddress v6(String text) throws UnknownHostException {
    return java.net.Inet6Address.getByAddress(null, literal(text), -1);
  }

  /**
   * The 16 bytes of an IPv6 literal, kept as IPv6 (InetAddress would turn a mapped one to IPv4).
   */
  private static byte[] literal(String text) throws UnknownHostException {
    String v4 = text.substring(text.lastIndexOf(':') + 1);
    byte[] b = new byte[16];
    if (text.startsWith("::ffff:")) {
      b[10] = (byte) 0xff;
      b[11] = (byte) 0xff;
    }
    System.arraycopy(InetAddress.getByName(v4).getAddress(), 0, b, 12, 4);
    return b;
  }

  @Test
  void shouldTakeAnyPortOnlyWhereTheEntrySaysSo() {
    CallbackUrls local =
        new CallbackUrls(List.of("127.0.0.1:*"), List.of(80), true, CallbackUrlsTest::resolve);
    assertThat(local.check("http://127.0.0.1:41234/hook")).isNotNull();
    assertThatThrownBy(() -> local.check("http://127.0.0.2:41234/hook"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  private static InetAddress[] resolve(String host) throws UnknownHostException {
    String address = DNS.get(host);
    if (address == null) {
      throw new UnknownHostException(host);
    }
    return new InetAddress[] {InetAddress.getByName(address)};
  }
}
