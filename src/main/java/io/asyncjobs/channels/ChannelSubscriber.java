package io.asyncjobs.channels;

/**
 * A bean that acts on one PostgreSQL notification channel. {@link ChannelListener} finds every
 * subscriber and LISTENs for all of them on one connection. Both methods run on the listener's
 * thread, so they must return quickly and never throw.
 */
public interface ChannelSubscriber {

  /** The channel's name, a plain identifier. */
  String channel();

  /** A notification arrived on the channel, with its payload (empty when none was sent). */
  void notified(String payload);

  /** The listener reconnected after an outage; notifications sent meanwhile were lost. */
  default void reconnected() {}
}
