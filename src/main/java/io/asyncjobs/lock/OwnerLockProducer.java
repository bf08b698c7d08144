package io.asyncjobs.lock;

import io.agroal.api.AgroalDataSource;
import io.asyncjobs.config.JobsConfig;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
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
        new LockMetrics(registry, () -> self.get() != null && self.get().isOwner());
    if (lock.mode() == JobsConfig.Lock.Mode.NONE) {
      LOG.infof("Owner lock: none; %s processes no jobs", identity);
      NoOwnerLock none = new NoOwnerLock(identity);
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
              client,
              namespace,
              lock.name(),
              identity,
              lock.leaseDuration(),
              lock.renewDeadline(),
              lock.retryPeriod(),
              () -> nextEpoch(dataSource),
              metrics);
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

  /** A fencing epoch larger than every earlier one, from the database sequence. */
  static long nextEpoch(AgroalDataSource dataSource) {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT nextval('jobs_owner_epoch_seq')")) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException("could not take a fencing epoch", e);
    }
  }

  void release(@Disposes OwnerLock lock) {
    lock.release();
  }
}
