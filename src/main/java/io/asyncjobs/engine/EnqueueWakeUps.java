package io.asyncjobs.engine;

import io.asyncjobs.channels.ChannelSubscriber;
import io.asyncjobs.queue.JobQueue;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Wakes a job service the moment a job of its kind is enqueued: {@code JobQueue} sends the kind on
 * {@value JobQueue#ENQUEUED_CHANNEL} in the enqueuing transaction. After the listener lost its
 * connection every service is woken, since the kinds enqueued meanwhile are unknown.
 */
@ApplicationScoped
class EnqueueWakeUps implements ChannelSubscriber {

  private final ServiceManager manager;

  EnqueueWakeUps(ServiceManager manager) {
    this.manager = manager;
  }

  @Override
  public String channel() {
    return JobQueue.ENQUEUED_CHANNEL;
  }

  @Override
  public void notified(String kind) {
    manager.wakeFor(kind);
  }

  @Override
  public void reconnected() {
    manager.wakeAll();
  }
}
