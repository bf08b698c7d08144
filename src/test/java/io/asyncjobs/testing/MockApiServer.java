package io.asyncjobs.testing;

import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.net.InetAddress;
import java.util.HashMap;

/**
 * A Kubernetes API server for packaged replicas outside JUnit's Kubernetes extension: fabric8's
 * CRUD mock (Leases with real optimistic concurrency) on a free loopback port.
 */
public final class MockApiServer {

  private MockApiServer() {}

  /** The environment that puts a packaged replica in Lease mode against {@code server}. */
  public static java.util.Map<String, String> leaseEnvironment(KubernetesMockServer server) {
    return java.util.Map.of(
        "JOBS_LOCK_MODE", "kubernetes",
        "JOBS_LOCK_NAMESPACE", "default",
        "QUARKUS_KUBERNETES_CLIENT_API_SERVER_URL", "http://127.0.0.1:" + server.getPort(),
        "QUARKUS_KUBERNETES_CLIENT_NAMESPACE", "default",
        "QUARKUS_KUBERNETES_CLIENT_TRUST_CERTS", "true");
  }

  /** Starts one; {@link KubernetesMockServer#destroy()} stops it. */
  public static KubernetesMockServer start() {
    KubernetesMockServer server =
        new KubernetesMockServer(
            new Context(),
            new MockWebServer(),
            new HashMap<>(),
            new KubernetesCrudDispatcher(),
            false);
    server.init(InetAddress.getLoopbackAddress(), 0);
    return server;
  }
}
