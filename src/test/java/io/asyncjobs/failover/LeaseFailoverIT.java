package io.asyncjobs.failover;

import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;

/**
 * The failover scenarios with the Kubernetes Lease: both replicas elect through one CRUD API server
 * that the test runs on loopback.
 */
class LeaseFailoverIT extends FailoverScenarios {

  private KubernetesMockServer apiServer;

  @Override
  String mode() {
    return "kubernetes";
  }

  @Override
  Map<String, String> lockEnvironment() {
    apiServer =
        new KubernetesMockServer(
            new Context(),
            new MockWebServer(),
            new HashMap<>(),
            new KubernetesCrudDispatcher(),
            false);
    apiServer.init(InetAddress.getLoopbackAddress(), 0);
    // The other replica takes a released Lease at its next retry, so the retry period bounds the
    // handover; a second here keeps it under the two seconds the scenario allows.
    return Map.of(
        "JOBS_LOCK_MODE", "kubernetes",
        "JOBS_LOCK_RETRY_PERIOD", "1s",
        "JOBS_LOCK_NAMESPACE", "default",
        "QUARKUS_KUBERNETES_CLIENT_API_SERVER_URL", "http://127.0.0.1:" + apiServer.getPort(),
        "QUARKUS_KUBERNETES_CLIENT_NAMESPACE", "default",
        "QUARKUS_KUBERNETES_CLIENT_TRUST_CERTS", "true");
  }

  @AfterEach
  void stopApiServer() {
    if (apiServer != null) {
      apiServer.destroy();
    }
  }
}
