package io.asyncjobs.engine;

import java.time.Instant;
import java.util.List;

/**
 * What the owner of a shard sends on behalf of its ended jobs: completion callbacks. Each tick of a
 * runner that may claim asks for the deliveries due in its shard, and the kind's sweeping runner
 * for those of retired shards; they go out in the background so that the tick returns at once.
 */
public interface Deliveries {

  /** Nothing to deliver: for a service built without callbacks. */
  Deliveries NONE = (kind, shard, epoch, now) -> {};

  /**
   * Starts the deliveries due at {@code now} in the shard, under {@code epoch} (a superseded owner
   * starts none).
   */
  void deliverDue(String kind, String shard, long epoch, Instant now);

  /**
   * Starts the deliveries due at {@code now} in the kind's shards that {@code mapped} (the current
   * mapping) does not name: retired shards, whose runners go once they hold no pending or running
   * job. Asked by the kind's sweeping runner, under its {@code epoch}.
   */
  default void deliverRetired(String kind, List<String> mapped, long epoch, Instant now) {}
}
