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
 * lets in, only addresses that are not loopback, link-local, wildcard or multicast when it is
 * resolved right before the delivery.
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
    assertThatCode(() -> urls.checkAddress(URI.create("http://builds.ci.svc/hook")))
        .doesNotThrowAnyException();
    for (String host : List.of("sneaky.team.svc", "metadata.team.svc", "v6.team.svc")) {
      URI uri = URI.create("http://" + host + "/hook");
      assertThat(urls.check(uri.toString())).as("taken at enqueue: not resolved then").isNotNull();
      assertThatThrownBy(() -> urls.checkAddress(uri))
          .as(host)
          .isInstanceOf(CallbackUrls.RefusedAddressException.class)
          .hasMessageContaining("loopback, link-local");
    }
    assertThatCode(() -> urls.checkAddress(URI.create("http://ops-box/hook")))
        .as("a host the operator listed by name is taken as written")
        .doesNotThrowAnyException();
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
