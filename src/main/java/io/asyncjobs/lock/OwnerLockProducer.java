package io.asyncjobs.lock;

import io.agroal.api.AgroalDataSource;
import io.asyncjobs.config.JobsConfig;
import io.asyncjobs.config.Shards;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import java.time.Clock;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Builds the owner locks that {@code jobs.lock.mode} asks for, one per shard, each competing from
 * the moment it is first asked for (except in mode {@code none}, which never competes).
 */
public class OwnerLockProducer {

  private static final Logger LOG = Logger.getLogger(OwnerLockProducer.class);

  @Produces
  @ApplicationScoped
  OwnerLocks ownerLocks(
      JobsConfig config,
      Shards shards,
      MeterRegistry registry,
      AgroalDataSource dataSource,
      Instance<KubernetesClient> kubernetes,
      @ConfigProperty(name = "quarkus.datasource.jdbc.url") String url,
      @ConfigProperty(name = "quarkus.datasource.username") Optional<String> user,
      @ConfigProperty(name = "quarkus.datasource.password") Optional<String> password) {
    JobsConfig.Lock lock = config.lock();
    if (lock.renewDeadline().compareTo(lock.leaseDuration()) >= 0) {
      throw new IllegalArgumentException(
          "jobs.lock.renew-deadline must be shorter than jobs.lock.lease-duration");
    }
    String identity = Identity.of(lock);
    // Balanced shards wait for the first round of the balance before they compete.
    boolean competeAtOnce = shards.isUnsharded();
    if (lock.mode() == JobsConfig.Lock.Mode.NONE) {
      LOG.infof("Owner lock: none; %s processes no jobs", identity);
      return new OwnerLocks(
          identity, key -> new NoOwnerLock(Shards.lockName(lock.name(), key), identity));
    }
    if (useKubernetes(lock.mode())) {
      KubernetesClient client = kubernetes.get();
      String namespace = namespaceOf(client, lock);
      KubernetesClient election = electionClient(client, lock);
      return new OwnerLocks(
          identity,
          key -> {
            String name = Shards.lockName(lock.name(), key);
            AtomicReference<OwnerLock> self = new AtomicReference<>();
            KubernetesOwnerLock lease =
                new KubernetesOwnerLock(
                    election,
                    namespace,
                    name,
                    identity,
                    lock.leaseDuration(),
                    lock.renewDeadline(),
                    lock.retryPeriod(),
                    lock.takeoverMargin(),
                    holder -> Epochs.take(dataSource, name, holder),
                    metrics(registry, key, self),
                    Clock.offset(Clock.systemUTC(), lock.wallClockOffset()),
                    System::nanoTime);
            self.set(lease);
            lease.compete(competeAtOnce);
            lease.start();
            LOG.infof("Owner lock: Lease %s/%s, identity %s", namespace, name, identity);
            return lease;
          });
    }
    return new OwnerLocks(
        identity,
        key -> {
          String name = Shards.lockName(lock.name(), key);
          AtomicReference<OwnerLock> self = new AtomicReference<>();
          PostgresOwnerLock postgres =
              new PostgresOwnerLock(
                  url,
                  user.orElse(null),
                  password.orElse(null),
                  lock.name(),
                  name,
                  identity,
                  lock.renewDeadline(),
                  lock.retryPeriod(),
                  lock.takeoverMargin(),
                  metrics(registry, key, self));
          self.set(postgres);
          postgres.compete(competeAtOnce);
          postgres.start();
          LOG.infof("Owner lock: PostgreSQL advisory lock %s, identity %s", name, identity);
          return postgres;
        });
  }

  /** Who is alive, for the balance of shards: read from the coordination store the locks use. */
  @Produces
  @ApplicationScoped
  Members members(
      JobsConfig config, AgroalDataSource dataSource, Instance<KubernetesClient> kubernetes) {
    JobsConfig.Lock lock = config.lock();
    String identity = Identity.of(lock);
    if (lock.mode() == JobsConfig.Lock.Mode.NONE) {
      return Members.alone(identity);
    }
    if (useKubernetes(lock.mode())) {
      KubernetesClient client = kubernetes.get();
      String namespace = namespaceOf(client, lock);
      return new LeaseMembers(
          electionClient(client, lock),
          namespace,
          lock.name() + "-members",
          identity,
          // A member unseen for a renew deadline counts as gone: its shards' Leases then expire
          // while the others already compete for them (and a live member that was only slow
          // costs nothing: its Leases are still renewed, so nobody can take them).
          lock.renewDeadline(),
          Clock.offset(Clock.systemUTC(), lock.wallClockOffset()),
          System::nanoTime);
    }
    return new PostgresMembers(dataSource, lock.name(), identity);
  }

  /**
   * Whether a replica of a release before shards holds the unsharded lock: only a sharded mapping
   * asks (the unsharded one takes that lock itself, like the older release).
   */
  @Produces
  @ApplicationScoped
  OlderRelease olderRelease(
      JobsConfig config,
      Shards shards,
      AgroalDataSource dataSource,
      Instance<KubernetesClient> kubernetes) {
    JobsConfig.Lock lock = config.lock();
    if (lock.mode() == JobsConfig.Lock.Mode.NONE || shards.isUnsharded()) {
      return OlderRelease.none();
    }
    if (useKubernetes(lock.mode())) {
      KubernetesClient client = kubernetes.get();
      Clock clock = Clock.offset(Clock.systemUTC(), lock.wallClockOffset());
      return OlderRelease.kubernetes(
          dataSource,
          electionClient(client, lock),
          namespaceOf(client, lock),
          lock.name(),
          clock::instant);
    }
    return OlderRelease.postgres(dataSource, lock.name());
  }

  /** The lock of the shard {@code all}: the one lock of the unsharded default. */
  @Produces
  @ApplicationScoped
  OwnerLock ownerLock(OwnerLocks locks) {
    return locks.primary();
  }

  private static LockMetrics metrics(
      MeterRegistry registry, String shard, AtomicReference<OwnerLock> self) {
    return new LockMetrics(
        registry,
        shard,
        () -> self.get() != null && self.get().isOwner(),
        () -> self.get() == null || self.get().status().competing());
  }

  /** The configured namespace, else the client's (the pod's own in a cluster), else default. */
  private static String namespaceOf(KubernetesClient client, JobsConfig.Lock lock) {
    return lock.namespace()
        .orElseGet(() -> Optional.ofNullable(client.getNamespace()).orElse("default"));
  }

  /** {@code auto} means Kubernetes exactly when running in a pod (the API server is announced). */
  static boolean useKubernetes(JobsConfig.Lock.Mode mode) {
    return switch (mode) {
      case KUBERNETES -> true;
      case POSTGRES, NONE -> false;
      case AUTO -> System.getenv("KUBERNETES_SERVICE_HOST") != null;
    };
  }

  /**
   * A client of the same API server for the election alone: each request gives up within a third of
   * the renew deadline, and the client does not retry by itself (its backoff could carry one
   * request across an outage longer than the deadline, or hold the election thread past it); the
   * election retries every period instead.
   */
  static KubernetesClient electionClient(KubernetesClient client, JobsConfig.Lock lock) {
    int timeoutMillis = (int) Math.max(500, lock.renewDeadline().toMillis() / 3);
    Config config =
        new ConfigBuilder(client.getConfiguration())
            .withRequestTimeout(timeoutMillis)
            .withConnectionTimeout(timeoutMillis)
            .withRequestRetryBackoffLimit(0)
            .build();
    return new KubernetesClientBuilder().withConfig(config).build();
  }

  void release(@Disposes OwnerLocks locks) {
    locks.releaseAll();
  }
}
