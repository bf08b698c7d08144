package io.asyncjobs.cli;

import jakarta.enterprise.context.ApplicationScoped;
import java.util.Arrays;
import java.util.Optional;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfoService;
import org.flywaydb.core.api.MigrationState;

/**
 * Whether the database is one this build can work with. The CLI never migrates (only the service
 * does, at start), so a schema that lags behind this build is refused with a message instead of
 * failing later on a missing column. A schema ahead of it, migrated by a newer release before a
 * {@code kubectl rollout undo}, is accepted: the newer release's migrations are future ones, not
 * pending, and the migration policy keeps that schema usable by this build.
 */
@ApplicationScoped
class SchemaCheck {

  private final Flyway flyway;

  SchemaCheck(Flyway flyway) {
    this.flyway = flyway;
  }

  /** Why the schema cannot be used, or empty when it can. */
  Optional<String> problem() {
    MigrationInfoService info = flyway.info();
    if (Arrays.stream(info.all()).anyMatch(m -> m.getState() == MigrationState.FAILED)) {
      return Optional.of(
          "a database migration failed; the service's log says which, and nothing was done");
    }
    int pending = info.pending().length;
    if (pending > 0) {
      return Optional.of(
          "the database schema lacks "
              + pending
              + " migration(s) of this build; the service applies them when it starts (the"
              + " admin CLI never changes the schema), so start it first");
    }
    return Optional.empty();
  }
}
