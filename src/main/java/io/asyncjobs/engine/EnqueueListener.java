package io.asyncjobs.engine;

import io.asyncjobs.config.JobsConfig;
import io.asyncjobs.lock.OwnerLock;
import io.asyncjobs.queue.JobQueue;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * Wakes a job service the moment a job of its kind is enqueued. {@code JobQueue} sends a NOTIFY on
 * {@value JobQueue#ENQUEUED_CHANNEL} with the kind in the enqueuing transaction; this listener
 * holds its own connection (outside the pool, since it is never returned) and LISTENs; it also
 * hears an owner announce that it released the lock, and makes this replica try for it at once. On
 * reconnecting after a lost connection it wakes every service, because notifications sent meanwhile
 * are gone.
 */
@ApplicationScoped
public class EnqueueListener {

  private static final Logger LOG = Logger.getLogger(EnqueueListener.class);
  private static final int POLL_MILLIS = 500;
  private static final long MAX_BACKOFF_MILLIS = 2_000;

  private final ServiceManager manager;
  private final OwnerLock ownerLock;
  private final boolean enabled;
  private final String url;
  private final String user;
  private final String password;
  private volatile Thread thread;
  private volatile boolean stopping;

  EnqueueListener(
      ServiceManager manager,
      OwnerLock ownerLock,
      JobsConfig config,
      @ConfigProperty(name = "quarkus.datasource.jdbc.url") String url,
      @ConfigProperty(name = "quarkus.datasource.username") Optional<String> user,
      @ConfigProperty(name = "quarkus.datasource.password") Optional<String> password) {
    this.manager = manager;
    this.ownerLock = ownerLock;
    this.enabled = config.wakeUps();
    this.url = url;
    this.user = user.orElse(null);
    this.password = password.orElse("");
  }

  void onStart(@Observes StartupEvent event) {
    if (!enabled) {
      return;
    }
    Thread listener = new Thread(this::listenLoop, "jobs-enqueue-listener");
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
    while (!stopping) {
      try (Connection connection = DriverManager.getConnection(url, user, password)) {
        try (Statement s = connection.createStatement()) {
          s.execute("LISTEN " + JobQueue.ENQUEUED_CHANNEL);
          s.execute("LISTEN " + OwnerLock.RELEASED_CHANNEL);
        }
        if (!first) {
          LOG.info("Enqueue listener reconnected; waking every service");
          manager.wakeAll();
        }
        warned = false;
        first = false;
        backoff = 100;
        PGConnection pg = connection.unwrap(PGConnection.class);
        while (!stopping) {
          PGNotification[] notifications = pg.getNotifications(POLL_MILLIS);
          if (notifications != null) {
            for (PGNotification n : notifications) {
              if (OwnerLock.RELEASED_CHANNEL.equals(n.getName())) {
                ownerLock.attemptSoon();
              } else {
                manager.wakeFor(n.getParameter());
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
              "Enqueue listener lost its connection (%s); retrying every %d ms at most",
              e, MAX_BACKOFF_MILLIS);
        } else {
          LOG.debugf("Enqueue listener could not reconnect (%s); retrying in %d ms", e, backoff);
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
