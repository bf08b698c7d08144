package io.asyncjobs.lock;

import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

/**
 * Shows who owns the job queue in {@code /q/health}. Always up: a replica that does not own still
 * serves requests, so ownership must not take it out of the Service.
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
            .up()
            .withData("mode", status.mode())
            .withData("identity", status.identity())
            .withData("owner", status.owner())
            .withData("epoch", status.epoch());
    if (status.since() != null) {
      response.withData("since", status.since().toString());
    }
    return response.build();
  }
}
