package io.asyncjobs.lock;

import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

/**
 * Shows who owns the job queue in {@code /q/health}. Up whether or not this replica owns: a replica
 * that does not own still serves requests, so ownership must not take it out of the Service. Down
 * only when the replica no longer competes for the lock (it was released, or its attempts hang),
 * since such a replica could never take over.
 */
@Readiness
@ApplicationScoped
public class OwnerHealthCheck implements HealthCheck {

  private final OwnerLock lock;

  OwnerHealthCheck(OwnerLock lock) {
    this.lock = lock;
  }

  @Override
  public HealthCheckResponse call() {
    OwnerStatus status = lock.status();
    HealthCheckResponseBuilder response =
        HealthCheckResponse.named("owner lock")
            .status(status.competing())
            .withData("mode", status.mode())
            .withData("identity", status.identity())
            .withData("owner", status.owner())
            .withData("epoch", status.epoch())
            .withData("trust", status.trust().name().toLowerCase(java.util.Locale.ROOT))
            .withData("competing", status.competing());
    if (status.since() != null) {
      response.withData("since", status.since().toString());
    }
    return response.build();
  }
}
