package io.asyncjobs.failover;

import java.time.Duration;
import java.util.Map;

/** The shard scenarios with an advisory lock per shard. */
class ShardsPostgresIT extends ShardScenarios {

  @Override
  String mode() {
    return "postgres";
  }

  @Override
  Map<String, String> lockEnvironment() {
    return Map.of("JOBS_LOCK_MODE", "postgres");
  }

  /** A session holds the lock's advisory key. */
  @Override
  boolean lockHeld(String name) throws Exception {
    try (java.sql.Connection c = connectToDatabase();
        java.sql.PreparedStatement ps =
            c.prepareStatement(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
                    + " AND objsubid = 1 AND ((classid::bigint << 32) | objid::bigint) = ?")) {
      ps.setLong(1, io.asyncjobs.lock.PostgresOwnerLock.keyOf(name));
      try (java.sql.ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1) > 0;
      }
    }
  }

  /** A dead replica's sessions end with it; the others see that within a retry period or two. */
  @Override
  Duration takeoverAllowed() {
    return RETRY_PERIOD.multipliedBy(2).plusSeconds(2);
  }
}
