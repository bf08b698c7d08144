package io.asyncjobs.lock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agroal.api.AgroalDataSource;
import io.asyncjobs.testing.TcpProxy;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Lease candidates against the CRUD API server of quarkus-test-kubernetes-client. */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
class KubernetesOwnerLockTest {

  private static final Duration LEASE = Duration.ofSeconds(3);
  private static final Duration RENEW_DEADLINE = Duration.ofSeconds(2);
  private static final Duration RETRY = Duration.ofMillis(500);

  @Inject KubernetesClient client;
  @Inject AgroalDataSource dataSource;

  private final String name = "test-" + UUID.randomUUID().toString().substring(0, 8);
  private final List<KubernetesOwnerLock> candidates = new ArrayList<>();

  @AfterEach
  void stopAll() {
    candidates.forEach(KubernetesOwnerLock::abandon);
  }

  @Test
  void shouldElectExactlyOneOfTwoCandidates() {
    KubernetesOwnerLock a = candidate("a", client);
    KubernetesOwnerLock b = candidate("b", client);

    awaitTrue(() -> a.isOwner() || b.isOwner(), Duration.ofSeconds(5));
    assertThat(a.isOwner() && b.isOwner()).isFalse();
    Lease lease = client.leases().inNamespace("default").withName(name).get();
    assertThat(lease.getSpec().getHolderIdentity()).isEqualTo(a.isOwner() ? "a" : "b");
  }

  @Test
  void shouldLetASecondCandidateTakeOverWhenTheFirstStopsRenewing() {
    KubernetesClient aClient = refusingWrites(new AtomicBoolean());
    KubernetesOwnerLock a = candidate("a", aClient);
    awaitTrue(a::isOwner, Duration.ofSeconds(5));
    KubernetesOwnerLock b = candidate("b", client);
    long firstEpoch = a.epoch();

    // As a crashed pod: its client is gone, so nothing renews or releases the Lease.
    long stoppedAt = System.nanoTime();
    aClient.close();
    a.abandon();

    awaitTrue(b::isOwner, LEASE.plusSeconds(3));
    assertThat(Duration.ofNanos(System.nanoTime() - stoppedAt))
        .as("not before the Lease ran out")
        .isGreaterThanOrEqualTo(LEASE.minusMillis(RETRY.toMillis() * 2));
    assertThat(b.epoch()).isGreaterThan(firstEpoch);
    assertThat(client.leases().inNamespace("default").withName(name).get().getSpec())
        .satisfies(spec -> assertThat(spec.getHolderIdentity()).isEqualTo("b"));
  }

  @Test
  void shouldHandOverAtOnceWhenTheOwnerReleases() {
    KubernetesOwnerLock a = candidate("a", client);
    awaitTrue(a::isOwner, Duration.ofSeconds(5));
    KubernetesOwnerLock b = candidate("b", client);

    long releasedAt = System.nanoTime();
    a.release();

    awaitTrue(b::isOwner, LEASE.plusSeconds(3));
    assertThat(Duration.ofNanos(System.nanoTime() - releasedAt)).isLessThan(LEASE);
    assertThat(a.isOwner()).isFalse();
  }

  @Test
  void shouldRefuseAStaleUpdate() {
    client
        .leases()
        .inNamespace("default")
        .resource(
            new LeaseBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withNewSpec()
                .withHolderIdentity("a")
                .endSpec()
                .build())
        .create();
    Lease stale = client.leases().inNamespace("default").withName(name).get();
    Lease fresh = client.leases().inNamespace("default").withName(name).get();
    fresh.getSpec().setHolderIdentity("b");
    client.leases().inNamespace("default").resource(fresh).update();

    stale.getSpec().setHolderIdentity("c");
    assertThatThrownBy(() -> client.leases().inNamespace("default").resource(stale).update())
        .isInstanceOfSatisfying(
            KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(409));
    assertThat(client.leases().inNamespace("default").withName(name).get().getSpec())
        .satisfies(spec -> assertThat(spec.getHolderIdentity()).isEqualTo("b"));
  }

  @Test
  void shouldStopClaimingWhenTheApiServerRefusesWritesButStillAnswersReads() {
    AtomicBoolean refuseWrites = new AtomicBoolean();
    KubernetesClient flaky = refusingWrites(refuseWrites);
    KubernetesOwnerLock a = candidate("a", flaky);
    awaitTrue(a::isOwner, Duration.ofSeconds(5));

    long refusedAt = System.nanoTime();
    refuseWrites.set(true);

    awaitTrue(() -> !a.isOwner(), RENEW_DEADLINE.plusSeconds(2));
    assertThat(Duration.ofNanos(System.nanoTime() - refusedAt))
        .isLessThan(RENEW_DEADLINE.plus(RETRY).plusSeconds(1));
    flaky.close();
  }

  @Test
  void shouldNotTakeOverWhileTheHolderRenewsEvenWithItsClockFarAhead() throws Exception {
    KubernetesOwnerLock a = candidate("a", client);
    awaitTrue(a::isOwner, Duration.ofSeconds(5));
    // Thirty seconds ahead: by its wall clock every renewal of a's is ten lease durations old,
    // which is all an elector that compares renew times with its own clock needs to take over.
    KubernetesOwnerLock b =
        candidate("b", client, Clock.offset(Clock.systemUTC(), Duration.ofSeconds(30)));

    long deadline = System.nanoTime() + LEASE.multipliedBy(3).toNanos();
    while (System.nanoTime() < deadline) {
      assertThat(b.isOwner()).as("b must not take a Lease that a renews").isFalse();
      assertThat(a.isOwner()).isTrue();
      Thread.sleep(50);
    }
    long stoppedAt = System.nanoTime();
    a.abandon();

    awaitTrue(b::isOwner, LEASE.plusSeconds(3));
    assertThat(Duration.ofNanos(System.nanoTime() - stoppedAt))
        .as("b waited for the Lease to run out on its own clock")
        .isGreaterThanOrEqualTo(LEASE.minus(RETRY));
  }

  @Test
  void shouldKeepCompetingAfterTheApiServerWasAwayForLongerThanTheRenewDeadline() throws Exception {
    try (TcpProxy proxy = new TcpProxy(apiPort());
        KubernetesClient through = throughProxy(proxy)) {
      KubernetesOwnerLock a = candidate("a", through);
      awaitTrue(a::isOwner, Duration.ofSeconds(5));
      long first = a.epoch();

      proxy.cut();
      awaitTrue(() -> a.trust() == Trust.NONE, RENEW_DEADLINE.plusSeconds(2));
      Thread.sleep(RENEW_DEADLINE.toMillis()); // well past the deadline, and past a lease
      assertThat(a.status().competing()).isTrue();
      proxy.restore();

      awaitTrue(a::isOwner, LEASE.plusSeconds(3));
      assertThat(a.epoch()).as("a new holding, a new epoch").isGreaterThan(first);
    }
  }

  @Test
  void shouldHandTheLeaseBackAndForthAsEachOwnerInTurnIsCutOff() throws Exception {
    try (TcpProxy toA = new TcpProxy(apiPort());
        TcpProxy toB = new TcpProxy(apiPort());
        KubernetesClient aClient = throughProxy(toA);
        KubernetesClient bClient = throughProxy(toB)) {
      KubernetesOwnerLock a = candidate("a", aClient);
      awaitTrue(a::isOwner, Duration.ofSeconds(5));
      KubernetesOwnerLock b = candidate("b", bClient);

      for (int round = 0; round < 2; round++) {
        KubernetesOwnerLock owner = a.isOwner() ? a : b;
        KubernetesOwnerLock other = owner == a ? b : a;
        TcpProxy ownersLink = owner == a ? toA : toB;
        ownersLink.cut();

        awaitTrue(other::isOwner, LEASE.plus(RENEW_DEADLINE).plusSeconds(3));
        assertThat(owner.trust())
            .as("round %d: the cut-off owner stopped before the other took over", round)
            .isEqualTo(Trust.NONE);
        ownersLink.restore();
        Thread.sleep(RETRY.multipliedBy(3).toMillis());
        assertThat(owner.isOwner()).as("round %d: it sees it lost", round).isFalse();
        assertThat(other.isOwner()).isTrue();
      }
    }
  }

  @Test
  void shouldRetryAnEpochItCouldNotTakeAndOwnOnceItCan() throws Exception {
    AtomicInteger refusals = new AtomicInteger(3);
    KubernetesOwnerLock a =
        track(
            new KubernetesOwnerLock(
                client,
                "default",
                name,
                "a",
                LEASE,
                RENEW_DEADLINE,
                RETRY,
                Duration.ofSeconds(1),
                holder -> {
                  if (refusals.getAndDecrement() > 0) {
                    throw new IllegalStateException("the database is away");
                  }
                  return Epochs.take(dataSource, name, holder);
                },
                LockMetrics.none()));
    a.start();

    awaitTrue(a::isOwner, RETRY.multipliedBy(8));
    assertThat(refusals.get()).isNegative();
    assertThat(client.leases().inNamespace("default").withName(name).get().getSpec())
        .satisfies(spec -> assertThat(spec.getHolderIdentity()).isEqualTo("a"));
  }

  @Test
  void shouldSayItNoLongerCompetesOnceReleased() {
    KubernetesOwnerLock a = candidate("a", client);
    awaitTrue(a::isOwner, Duration.ofSeconds(5));
    assertThat(a.status().competing()).isTrue();
    a.release();
    assertThat(a.status().competing()).isFalse();
  }

  private int apiPort() {
    return URI.create(client.getConfiguration().getMasterUrl()).getPort();
  }

  /** A client of the test server that goes through {@code proxy}, with the election's timeouts. */
  private KubernetesClient throughProxy(TcpProxy proxy) {
    return new KubernetesClientBuilder()
        .withConfig(
            new ConfigBuilder(client.getConfiguration())
                .withMasterUrl("http://127.0.0.1:" + proxy.port())
                .withRequestTimeout(700)
                .withConnectionTimeout(700)
                .withRequestRetryBackoffLimit(0)
                .build())
        .build();
  }

  private KubernetesOwnerLock candidate(String identity, KubernetesClient using) {
    return candidate(identity, using, Clock.systemUTC());
  }

  private KubernetesOwnerLock candidate(String identity, KubernetesClient using, Clock wall) {
    KubernetesOwnerLock lock =
        track(
            new KubernetesOwnerLock(
                using,
                "default",
                name,
                identity,
                LEASE,
                RENEW_DEADLINE,
                RETRY,
                Duration.ofSeconds(1),
                holder -> Epochs.take(dataSource, name, holder),
                LockMetrics.none(),
                wall,
                System::nanoTime));
    lock.start();
    return lock;
  }

  private KubernetesOwnerLock track(KubernetesOwnerLock lock) {
    candidates.add(lock);
    return lock;
  }

  /** A client of the same server whose writes fail while {@code refuse} is set. */
  private KubernetesClient refusingWrites(AtomicBoolean refuse) {
    Interceptor interceptor =
        new Interceptor() {
          @Override
          public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
            if (refuse.get() && !"GET".equals(request.method())) {
              builder.uri(URI.create(request.uri().toString().replace("/leases", "/refused")));
            }
          }
        };
    return new KubernetesClientBuilder()
        .withConfig(client.getConfiguration())
        .withHttpClientBuilderConsumer(b -> b.addOrReplaceInterceptor("refuse", interceptor))
        .build();
  }

  private static void awaitTrue(BooleanSupplier condition, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not met within " + timeout);
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }
}
