package io.asyncjobs.lock;

import io.asyncjobs.config.JobsConfig;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/** Builds the owner lock that {@code jobs.lock.mode} asks for and starts competing for it. */
public class OwnerLockProducer {

  private static final Logger LOG = Logger.getLogger(OwnerLockProducer.class);

  @Produces
  @ApplicationScoped
  OwnerLock ownerLock(
      JobsConfig config,
      MeterRegistry registry,
      @ConfigProperty(name = "quarkus.datasource.jdbc.url") String url,
      @ConfigProperty(name = "quarkus.datasource.username") Optional<String> user,
      @ConfigProperty(name = "quarkus.datasource.password") Optional<String> password) {
    JobsConfig.Lock lock = config.lock();
    JobsConfig.Lock.Mode mode = lock.mode();
    if (lock.renewDeadline().compareTo(lock.leaseDuration()) >= 0) {
      throw new IllegalArgumentException(
          "jobs.lock.renew-deadline must be shorter than jobs.lock.lease-duration");
    }
    if (mode == JobsConfig.Lock.Mode.KUBERNETES) {
      throw new IllegalStateException(
          "jobs.lock.mode=kubernetes: the Lease lock is not in this build yet;"
              + " use jobs.lock.mode=postgres");
    }
    if (mode == JobsConfig.Lock.Mode.AUTO && System.getenv("KUBERNETES_SERVICE_HOST") != null) {
      LOG.warn("Running in a cluster; the Lease lock is not in this build yet, using PostgreSQL");
    }
    String identity = Identity.of(lock);
    AtomicReference<OwnerLock> self = new AtomicReference<>();
    LockMetrics metrics =
        new LockMetrics(registry, () -> self.get() != null && self.get().isOwner());
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

  void release(@Disposes OwnerLock lock) {
    lock.release();
  }
}
