package io.asyncjobs.queue;

import io.quarkus.flyway.FlywayConfigurationCustomizer;
import jakarta.inject.Singleton;
import java.util.Map;
import org.flywaydb.core.api.configuration.FluentConfiguration;

/**
 * Migrations take Flyway's lock for the session, not for a transaction. A migration that builds an
 * index {@code CONCURRENTLY} (so that enqueues and claims go on meanwhile) runs outside any
 * transaction and waits for every transaction open on the database to end, Flyway's own among them:
 * with the transactional lock it would wait for ever.
 */
@Singleton
public class MigrationLock implements FlywayConfigurationCustomizer {

  @Override
  public void customize(FluentConfiguration configuration) {
    configuration.configuration(Map.of("flyway.postgresql.transactional.lock", "false"));
  }
}
