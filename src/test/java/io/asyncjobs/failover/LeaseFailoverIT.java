package io.asyncjobs.failover;

import io.asyncjobs.testing.MockApiServer;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
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
    apiServer = MockApiServer.start();
    // The other replica takes a released Lease at its next retry, which fabric8 jitters up to 2.2
    // retry periods away; half a second keeps the handover under the two seconds allowed (at 1 s a
    // run took 2.09 s).
    Map<String, String> env = new HashMap<>(MockApiServer.leaseEnvironment(apiServer));
    env.put("JOBS_LOCK_RETRY_PERIOD", "500ms");
    return env;
  }

  @AfterEach
  void stopApiServer() {
    if (apiServer != null) {
      apiServer.destroy();
    }
  }
}
