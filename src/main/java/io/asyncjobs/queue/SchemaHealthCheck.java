package io.asyncjobs.queue;

import jakarta.enterprise.context.ApplicationScoped;
import java.util.Arrays;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationInfoService;
import org.flywaydb.core.api.MigrationState;

/**
 * Readiness of the database schema: up only when every migration this build carries has been
 * applied and none failed. A replica whose schema lags (or a half-applied migration) is taken out
 * of the Service rather than failing requests. Once complete, the answer is remembered.
 */
@Readiness
@ApplicationScoped
public class SchemaHealthCheck implements HealthCheck {

  private final Flyway flyway;

  /**
   * The answer once the schema was found complete. A build's migrations never change and a schema
   * never goes back, so from then on probes skip the classpath scan and the history query.
   */
  private volatile HealthCheckResponse complete;

  SchemaHealthCheck(Flyway flyway) {
    this.flyway = flyway;
  }

  @Override
  public HealthCheckResponse call() {
    HealthCheckResponse known = complete;
    if (known != null) {
      return known;
    }
    HealthCheckResponseBuilder response = HealthCheckResponse.named("database schema");
    try {
      MigrationInfoService info = flyway.info();
      MigrationInfo current = info.current();
      long pending = info.pending().length;
      long failed =
          Arrays.stream(info.all()).filter(m -> m.getState() == MigrationState.FAILED).count();
      response
          .withData("version", current == null ? "none" : current.getVersion().getVersion())
          .withData("pending", pending)
          .withData("failed", failed);
      if (pending == 0 && failed == 0) {
        complete = response.up().build();
        return complete;
      }
      return response.down().build();
    } catch (RuntimeException e) {
      return response.down().withData("error", e.getClass().getSimpleName()).build();
    }
  }
}
