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

  @AfterEach
  void stopApiServer() {
    if (apiServer != null) {
      apiServer.destroy();
    }
  }
}
