package io.asyncjobs.channels;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.engine.WakeUpTest;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The one LISTEN connection hands each notification to the subscriber of its channel. */
// The listener runs only with wake-ups on; the profile of the wake-up tests turns them on.
@QuarkusTest
@TestProfile(WakeUpTest.WakeUps.class)
class ChannelListenerTest {

  @Inject Notifier notifier;
  @Inject Recorder recorder;

  @Test
  void shouldHandANotificationToItsChannelsSubscriber() throws Exception {

    // The listener connects at start; a notification sent before it listens is lost, so retry.
    String got = null;
    for (int i = 0; i < 50 && got == null; i++) {
      notifier.send(Recorder.CHANNEL, "hello " + i);
      got = recorder.next(200);
    }

    assertThat(got).startsWith("hello ");
  }

  /** A subscriber of a channel of its own, found by the listener like the application's. */
  @ApplicationScoped
  static class Recorder implements ChannelSubscriber {
    static final String CHANNEL = "jobs_test_channel";
    private final BlockingQueue<String> payloads = new LinkedBlockingQueue<>();

    /** The next payload to arrive within {@code millis}, or null (a method: this is a proxy). */
    String next(long millis) throws InterruptedException {
      return payloads.poll(millis, TimeUnit.MILLISECONDS);
    }

    @Override
    public String channel() {
      return CHANNEL;
    }

    @Override
    public void notified(String payload) {
      payloads.add(payload);
    }
  }
}
