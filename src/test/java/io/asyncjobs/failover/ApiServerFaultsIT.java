package io.asyncjobs.failover;

import static io.asyncjobs.failover.DatabaseFaultsIT.assertClean;
import static io.asyncjobs.failover.DatabaseFaultsIT.ms;
import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.testing.MockApiServer;
import io.asyncjobs.testing.ServiceProcess;
import io.asyncjobs.testing.TcpProxy;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two packaged replicas electing through a Kubernetes API server (the fabric8 CRUD mock on
 * loopback), each reaching it through a proxy the test cuts, slows and restores: the owner cut off
 * alone (twice in a row, so each replica loses once), every replica cut off, a slow confirmation,
 * and a candidate whose clock runs eight seconds ahead. Lease 6 s, renew deadline 4 s, retry 1 s.
 */
class ApiServerFaultsIT {

  private static final Duration LEASE = Duration.ofSeconds(6);
  private static final Duration CUT = Duration.ofSeconds(10);

  private KubernetesMockServer apiServer;
  private FaultCluster cluster;
  private final List<TcpProxy> proxies = new ArrayList<>();
  private final Map<ServiceProcess, TcpProxy> links = new HashMap<>();

  @BeforeEach
  void startCluster() throws Exception {
    apiServer = MockApiServer.start();
    cluster = new FaultCluster();
  }

  @AfterEach
  void stopAll() throws Exception {
    cluster.close();
    proxies.forEach(TcpProxy::close);
    apiServer.destroy();
  }

  @Test
  void shouldHandOverCleanlyWhenTheOwnerAloneIsCutOffTwiceInARow() throws Exception {
    ServiceProcess first = startPair("alone", Map.of());
    cluster.enqueue(4_000, 10);
    cluster.awaitDone(200, Duration.ofSeconds(60));

    List<String> takeovers = new ArrayList<>();
    ServiceProcess owner = first;
    for (int round = 0; round < 2; round++) {
      ServiceProcess other = otherThan(owner);
      TcpProxy link = links.get(owner);
      cluster.fault();
      link.cut();
      Duration takeover =
          FaultCluster.await(other::isOwner, LEASE.plusSeconds(6), other.name + " takes over");
      assertThat(owner.isOwner()).as("the cut-off owner stopped first").isFalse();
      takeovers.add(ms(takeover));
      Thread.sleep(Math.max(0, CUT.minus(takeover).toMillis()));
      link.restore();
      owner = other;
    }
    cluster.awaitDrained(Duration.ofSeconds(120));

    assertClean(
        cluster.report(
            "API server cut off from the owner alone, twice",
            "takeover " + String.join(", ", takeovers)));
    assertThat(takeovers).hasSize(2);
  }

  @Test
  void shouldOwnAgainByItselfWhenEveryReplicaWasCutOff() throws Exception {
    // The worst case: without the client's own request retries.
    startPair("all", Map.of("KUBERNETES_REQUEST_RETRY_BACKOFFLIMIT", "0"));
    cluster.enqueue(3_000, 10);
    cluster.awaitDone(200, Duration.ofSeconds(60));

    cluster.fault();
    links.values().forEach(TcpProxy::cut);
    FaultCluster.await(() -> cluster.owners().isEmpty(), Duration.ofSeconds(8), "nobody owns");
    Thread.sleep(CUT.toMillis());
    links.values().forEach(TcpProxy::restore);
    Duration back =
        FaultCluster.await(
            () -> cluster.owners().size() == 1, LEASE.plusSeconds(6), "an owner again");
    cluster.awaitDrained(Duration.ofSeconds(120));

    assertClean(
        cluster.report(
            "API server cut off from every replica for 10 s",
            "owner " + ms(back) + " after the return"));
  }

  @Test
  void shouldPauseButNeverInterruptWhileConfirmationsAreLate() throws Exception {
    ServiceProcess owner = startPair("slow", Map.of());
    cluster.enqueue(3_000, 10);
    cluster.awaitDone(200, Duration.ofSeconds(60));

    cluster.fault();
    links.get(owner).slow(Duration.ofMillis(400));
    int late = 0;
    int samples = 0;
    long until = System.nanoTime() + Duration.ofSeconds(8).toNanos();
    while (System.nanoTime() < until) {
      String health = owner.readinessBody();
      if (health != null && health.replace(" ", "").contains("\"trust\":\"finish\"")) {
        late++;
      }
      samples++;
      assertThat(otherThan(owner).isOwner()).as("nobody else takes over").isFalse();
      Thread.sleep(100);
    }
    links.get(owner).restore();
    cluster.awaitDrained(Duration.ofSeconds(120));

    Effects effects =
        cluster.report(
            "answers from the API server 0.4 s late for 8 s",
            late + " of " + samples + " samples paused, owner kept");
    assertClean(effects);
    assertThat(late).as("claiming paused while confirmations were late").isPositive();
    assertThat(effects.ranTwice()).as("nothing was interrupted").isZero();
    assertThat(owner.isOwner()).isTrue();
  }

  @Test
  void shouldNotLetACandidateWhoseClockIsAheadTakeOverALiveOwner() throws Exception {
    Map<String, String> env = environment();
    ServiceProcess a = start("skew-a", env);
    a.awaitReady(Duration.ofSeconds(90));
    FaultCluster.await(a::isOwner, Duration.ofSeconds(30), "a owns");
    Map<String, String> ahead = new HashMap<>(env);
    ahead.put("JOBS_LOCK_WALL_CLOCK_OFFSET", "8s");
    ServiceProcess b = start("skew-b", ahead);
    b.awaitReady(Duration.ofSeconds(90));
    cluster.enqueue(3_000, 10);

    long until = System.nanoTime() + LEASE.multipliedBy(2).toNanos();
    while (System.nanoTime() < until) {
      assertThat(b.isOwner()).as("b, eight seconds ahead, never takes a live Lease").isFalse();
      Thread.sleep(100);
    }
    cluster.fault();
    cluster.kill(a);
    Duration takeover = FaultCluster.await(b::isOwner, LEASE.plusSeconds(6), "b takes over");
    cluster.awaitDrained(Duration.ofSeconds(120));

    assertClean(
        cluster.report(
            "candidate's clock 8 s ahead; then the owner killed", "takeover " + ms(takeover)));
    assertThat(takeover)
        .as("not before the Lease ran out")
        .isGreaterThanOrEqualTo(LEASE.minusSeconds(1));
  }

  private ServiceProcess startPair(String scenario, Map<String, String> extra) throws Exception {
    Map<String, String> env = environment();
    env.putAll(extra);
    ServiceProcess a = start("api-" + scenario + "-a", env);
    a.awaitReady(Duration.ofSeconds(90));
    FaultCluster.await(a::isOwner, Duration.ofSeconds(30), "a owns");
    start("api-" + scenario + "-b", env);
    return cluster.awaitReadyAndOwner();
  }

  private Map<String, String> environment() throws Exception {
    Map<String, String> env = cluster.environment();
    env.put("JOBS_LOCK_MODE", "kubernetes");
    env.put("JOBS_LOCK_NAMESPACE", "default");
    env.put("QUARKUS_KUBERNETES_CLIENT_NAMESPACE", "default");
    env.put("QUARKUS_KUBERNETES_CLIENT_TRUST_CERTS", "true");
    return env;
  }

  /** Starts a replica that reaches the API server through a proxy of its own. */
  private ServiceProcess start(String name, Map<String, String> env) throws Exception {
    TcpProxy proxy = new TcpProxy(apiServer.getPort());
    proxies.add(proxy);
    Map<String, String> own = new HashMap<>(env);
    own.put("QUARKUS_KUBERNETES_CLIENT_API_SERVER_URL", "http://127.0.0.1:" + proxy.port());
    ServiceProcess replica = cluster.start(name, own);
    links.put(replica, proxy);
    return replica;
  }

  private ServiceProcess otherThan(ServiceProcess replica) {
    return links.keySet().stream().filter(r -> r != replica).findFirst().orElseThrow();
  }
}
