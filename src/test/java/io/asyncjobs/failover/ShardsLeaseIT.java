package io.asyncjobs.failover;

import io.asyncjobs.testing.MockApiServer;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;

/** The shard scenarios with a Lease per shard, through a CRUD API server on loopback. */
class ShardsLeaseIT extends ShardScenarios {

  private KubernetesMockServer apiServer;

  @Override
  String mode() {
    return "kubernetes";
  }

  @Override
  Map<String, String> lockEnvironment() {
    apiServer = MockApiServer.start();
    return MockApiServer.leaseEnvironment(apiServer);
  }

  /** The bound: the lease duration (a Lease unrenewed that long is taken) + 2 s. */
  @Override
  Duration takeoverAllowed() {
    return LEASE_DURATION.plusSeconds(2);
  }

  /** The Lease names a holder that renewed it within its duration. */
  @Override
  boolean lockHeld(String name) {
    try (io.fabric8.kubernetes.client.KubernetesClient client = apiServer.createClient()) {
      return io.asyncjobs.lock.LeaseHolders.liveHolder(
              client.leases().inNamespace("default").withName(name).get(), java.time.Instant.now())
          != null;
    }
  }

  @AfterEach
  void stopApiServer() {
    if (apiServer != null) {
      apiServer.destroy();
    }
  }
}
