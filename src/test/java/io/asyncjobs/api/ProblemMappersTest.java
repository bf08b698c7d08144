package io.asyncjobs.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.http.HttpClosedException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.ClosedChannelException;
import org.junit.jupiter.api.Test;

class ProblemMappersTest {

  @Test
  void shouldTellAClientThatLeftFromAFault() {
    // A browser closing an event stream surfaced as Netty's StacklessClosedChannelException (a
    // ClosedChannelException) and was logged as an error.
    assertThat(ProblemMappers.clientWentAway(new ClosedChannelException())).isTrue();
    assertThat(
            ProblemMappers.clientWentAway(
                new UncheckedIOException(new IOException("Connection reset by peer"))))
        .isTrue();
    // A client that closed its connection in the middle of a body streamed to the endpoint.
    assertThat(
            ProblemMappers.clientWentAway(
                new IOException(new IOException(new HttpClosedException("Connection was closed")))))
        .isTrue();
    assertThat(ProblemMappers.clientWentAway(new IllegalStateException("bug"))).isFalse();
    assertThat(ProblemMappers.clientWentAway(new IOException("disk full"))).isFalse();
  }
}
