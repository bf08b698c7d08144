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
