package io.asyncjobs.config;

import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/** Makes the configured mapping of jobs onto shards injectable, read once at start. */
public class ShardsProducer {

  @Produces
  @Singleton
  Shards shards(JobsConfig config) {
    return Shards.of(config);
  }
}
