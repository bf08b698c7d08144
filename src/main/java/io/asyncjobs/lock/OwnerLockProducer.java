package io.asyncjobs.lock;

import io.agroal.api.AgroalDataSource;
import io.asyncjobs.config.JobsConfig;
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
 * Builds the owner lock that {@code jobs.lock.mode} asks for and starts competing for it (except in
 * mode {@code none}, which never competes).
 */
public class OwnerLockProducer {

  private static final Logger LOG = Logger.getLogger(OwnerLockProducer.class);

  @Produces
  @ApplicationScoped
  OwnerLock ownerLock(
      JobsConfig config,
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
    AtomicReference<OwnerLock> self = new AtomicReference<>();
    LockMetrics metrics =
        new LockMetrics(
            registry,
            () -> self.get() != null && self.get().isOwner(),
            () -> self.get() == null || self.get().status().competing());
    if (lock.mode() == JobsConfig.Lock.Mode.NONE) {
      LOG.infof("Owner lock: none; %s processes no jobs", identity);
      NoOwnerLock none = new NoOwnerLock(lock.name(), identity);
      self.set(none);
      return none;
    }
    if (useKubernetes(lock.mode())) {
      KubernetesClient client = kubernetes.get();
      String namespace =
          lock.namespace()
              .orElseGet(() -> Optional.ofNullable(client.getNamespace()).orElse("default"));
      KubernetesOwnerLock lease =
          new KubernetesOwnerLock(
              electionClient(client, lock),
              namespace,
              lock.name(),
              identity,
              lock.leaseDuration(),
              lock.renewDeadline(),
              lock.retryPeriod(),
              lock.takeoverMargin(),
              holder -> Epochs.take(dataSource, lock.name(), holder),
              metrics,
              Clock.offset(Clock.systemUTC(), lock.wallClockOffset()),
              System::nanoTime);
      self.set(lease);
      lease.start();
      LOG.infof("Owner lock: Lease %s/%s, identity %s", namespace, lock.name(), identity);
      return lease;
    }
    PostgresOwnerLock postgres =
        new PostgresOwnerLock(
            url,
            user.orElse(null),
            password.orElse(null),
            lock.name(),
            identity,
            lock.renewDeadline(),
            lock.retryPeriod(),
            lock.takeoverMargin(),
            metrics);
    self.set(postgres);
    postgres.start();
    LOG.infof("Owner lock: PostgreSQL advisory lock, identity %s", identity);
    return postgres;
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

  void release(@Disposes OwnerLock lock) {
    lock.release();
  }
}
