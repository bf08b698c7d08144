package io.asyncjobs.channels;

import io.asyncjobs.config.JobsConfig;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * One connection that LISTENs on every channel a {@link ChannelSubscriber} names and hands each
 * notification to its subscriber. The connection is its own, outside the pool, since it is never
 * returned. After a lost connection it reconnects within {@value #MAX_BACKOFF_MILLIS} ms, warns
 * once per outage, and tells every subscriber it is back, because notifications sent meanwhile are
 * gone. Off when {@code jobs.wake-ups} is false.
 */
@ApplicationScoped
public class ChannelListener {

  private static final Logger LOG = Logger.getLogger(ChannelListener.class);
  private static final int POLL_MILLIS = 500;
  private static final long MAX_BACKOFF_MILLIS = 2_000;

  private final Map<String, ChannelSubscriber> subscribers = new LinkedHashMap<>();
  private final boolean enabled;
  private final String url;
  private final String user;
  private final String password;
  private volatile Thread thread;
  private volatile boolean stopping;

  ChannelListener(
      Instance<ChannelSubscriber> subscribers,
      JobsConfig config,
      @ConfigProperty(name = "quarkus.datasource.jdbc.url") String url,
      @ConfigProperty(name = "quarkus.datasource.username") Optional<String> user,
      @ConfigProperty(name = "quarkus.datasource.password") Optional<String> password) {
    for (ChannelSubscriber s : subscribers) {
      ChannelSubscriber before = this.subscribers.putIfAbsent(s.channel(), s);
      if (before != null) {
        throw new IllegalStateException("Two subscribers for channel " + s.channel());
      }
    }
    this.enabled = config.wakeUps();
    this.url = url;
    this.user = user.orElse(null);
    this.password = password.orElse("");
  }

  void onStart(@Observes StartupEvent event) {
    if (!enabled || subscribers.isEmpty()) {
      return;
    }
    Thread listener = new Thread(this::listenLoop, "jobs-channel-listener");
    listener.setDaemon(true);
    thread = listener;
    listener.start();
  }

  void onStop(@Observes ShutdownEvent event) {
    stopping = true;
    Thread listener = thread;
    if (listener != null) {
      listener.interrupt();
    }
  }

  private void listenLoop() {
    long backoff = 100;
    boolean first = true;
    boolean warned = false;
    List<ChannelSubscriber> all = List.copyOf(subscribers.values());
    while (!stopping) {
      try (Connection connection = DriverManager.getConnection(url, user, password)) {
        try (Statement s = connection.createStatement()) {
          for (String channel : subscribers.keySet()) {
            s.execute("LISTEN " + channel);
          }
        }
        if (!first) {
          LOG.info(
              "Channel listener reconnected; acting as if every notification sent meanwhile came");
          all.forEach(ChannelSubscriber::reconnected);
        }
        warned = false;
        first = false;
        backoff = 100;
        PGConnection pg = connection.unwrap(PGConnection.class);
        while (!stopping) {
          PGNotification[] notifications = pg.getNotifications(POLL_MILLIS);
          if (notifications != null) {
            for (PGNotification n : notifications) {
              ChannelSubscriber subscriber = subscribers.get(n.getName());
              if (subscriber != null) {
                subscriber.notified(n.getParameter());
              }
            }
          }
        }
      } catch (SQLException e) {
        if (stopping) {
          return;
        }
        if (!warned) {
          warned = true;
          LOG.warnf(
              "Channel listener lost its connection (%s); retrying every %d ms at most",
              e, MAX_BACKOFF_MILLIS);
        } else {
          LOG.debugf("Channel listener could not reconnect (%s); retrying in %d ms", e, backoff);
        }
        try {
          Thread.sleep(backoff);
        } catch (InterruptedException ie) {
          return;
        }
        backoff = Math.min(MAX_BACKOFF_MILLIS, backoff * 2);
      }
    }
  }
}
