package io.asyncjobs.engine;

import java.time.Instant;
import java.util.List;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * The callbacks step of a run: starts the completion callbacks due in the shard (through {@link
 * Deliveries}, which sends them in the background) and, for the kind's sweeping runner, those of
 * retired shards. A failure to start them leaves them due, for the next tick.
 */
final class CallbackStarter {

  private static final Logger LOG = Logger.getLogger(CallbackStarter.class);

  private final EngineContext context;
  private final ShardState state;

  /** The kind's shards in the current mapping, read when retired shards' callbacks are due. */
  private final Supplier<List<String>> mappedShards;

  CallbackStarter(EngineContext context, ShardState state, Supplier<List<String>> mappedShards) {
    this.context = context;
    this.state = state;
    this.mappedShards = mappedShards;
  }

  /**
   * Starts the callbacks due in this shard; a failure leaves them to the next tick.
   *
   * @return whether they were started
   */
  boolean runOnce(long epoch, Instant now) {
    try {
      context.deliveries().deliverDue(state.kind, state.shard, epoch, now);
      return true;
    } catch (RuntimeException e) {
      LOG.debugf(
          "%s: starting callbacks failed, the next tick does: %s", state.label(), e.getMessage());
      return false;
    }
  }

  /**
   * The sweeping runner's share: the callbacks due in shards the current mapping does not name. A
   * retired shard's runner goes once it has no pending or running job, however many of its
   * callbacks are still due; like its finished rows, those belong to the kind's first shard then.
   *
   * @return whether they were started
   */
  boolean runRetiredOnce(long epoch, Instant now) {
    try {
      context.deliveries().deliverRetired(state.kind, mappedShards.get(), epoch, now);
      return true;
    } catch (RuntimeException e) {
      LOG.debugf(
          "%s: starting retired shards' callbacks failed, the next tick does: %s",
          state.label(), e.getMessage());
      return false;
    }
  }
}
