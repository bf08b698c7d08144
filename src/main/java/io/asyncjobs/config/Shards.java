package io.asyncjobs.config;

/**
 * Names of the shards that ownership is split into (docs/design/shards.md). Every job row carries
 * its shard, fixed at enqueue, and an owner acts on the rows of the shards it holds the lock of.
 */
public final class Shards {

  /**
   * The one shard of the unsharded default: every kind's jobs, under the lock {@code
   * jobs.lock.name}. Rows from before shards belong to it.
   */
  public static final String ALL = "all";

  private Shards() {}
}
