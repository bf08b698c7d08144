package io.asyncjobs.failover;

import java.util.Map;

/** The failover scenarios with the PostgreSQL advisory lock. */
class PostgresFailoverIT extends FailoverScenarios {

  @Override
  String mode() {
    return "postgres";
  }

  @Override
  Map<String, String> lockEnvironment() {
    return Map.of("JOBS_LOCK_MODE", "postgres");
  }
}
