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

  /** A dead replica's sessions end with it; the others see that within a retry period or two. */
  @Override
  Duration takeoverAllowed() {
    return RETRY_PERIOD.multipliedBy(2).plusSeconds(2);
  }
}
