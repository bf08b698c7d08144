package io.asyncjobs.config;

import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Liveness;

/**
 * Which release this replica runs, in the health details ({@code /q/health}, {@code
 * /q/health/live}): during a rolling upgrade or a {@code kubectl rollout undo}, old and new
 * replicas answer side by side, and an operator (or the admin page) reads here which is which.
 * Always up: a version is not a fault.
 */
@Liveness
@ApplicationScoped
public class ReleaseHealthCheck implements HealthCheck {

  /** The check's name in the health answer. */
  public static final String NAME = "release";

  private final HealthCheckResponse response;

  ReleaseHealthCheck(
      @ConfigProperty(name = "quarkus.application.name") String name,
      @ConfigProperty(name = "quarkus.application.version") String version) {
    this.response =
        HealthCheckResponse.named(NAME)
            .up()
            .withData("name", name)
            .withData("version", version)
            .build();
  }

  @Override
  public HealthCheckResponse call() {
    return response;
  }
}
