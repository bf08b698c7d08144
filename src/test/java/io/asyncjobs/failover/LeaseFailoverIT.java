package io.asyncjobs.failover;

import io.asyncjobs.testing.MockApiServer;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
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
    apiServer = MockApiServer.start();
    // The other replica takes a released Lease at its next retry, which fabric8 jitters up to 2.2
    // retry periods away; half a second keeps the handover under the two seconds allowed (at 1 s a
    // run took 2.09 s).
    return Map.of(
        "JOBS_LOCK_MODE", "kubernetes",
        "JOBS_LOCK_RETRY_PERIOD", "500ms",
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
