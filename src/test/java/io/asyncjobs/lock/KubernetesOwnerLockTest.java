package io.asyncjobs.lock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agroal.api.AgroalDataSource;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
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

  private KubernetesOwnerLock candidate(String identity, KubernetesClient using) {
    KubernetesOwnerLock lock =
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
            LockMetrics.none());
    candidates.add(lock);
    lock.start();
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
