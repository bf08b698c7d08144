package io.asyncjobs.callbacks;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.asyncjobs.auth.DownloadLinks;
import io.asyncjobs.config.JobsConfig;
import io.asyncjobs.engine.Deliveries;
import io.asyncjobs.metrics.JobMetrics;
import io.asyncjobs.operations.JobView;
import io.asyncjobs.queue.CallbackStore;
import io.asyncjobs.queue.Job;
import io.asyncjobs.time.Backoff;
import io.asyncjobs.time.Clock;
import io.quarkus.runtime.Startup;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import java.net.InetAddress;
import java.net.URI;
import java.security.MessageDigest;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocketFactory;
import org.jboss.logging.Logger;

/**
 * Sends completion callbacks: when a job with a {@code callback_url} ends, its row becomes due (a
 * trigger in V20 does it on every path that ends a job), and the owner of the job's shard POSTs the
 * job's status view there, signed ({@link CallbackSignature}); a retired shard's callbacks, once
 * its runner is gone, by the owner of the kind's first shard. A 2xx answer ends it; anything else
 * is tried again with a doubling backoff and jitter until {@code jobs.callbacks.give-up-after} has
 * passed since the job ended. Each delivery first pushes the row's due time past its own timeout
 * (its lease), so a delivery cut off by a crash or a handover is sent again by the next owner: at
 * least once, never lost. Redirects are not followed, so a receiver cannot send the service to a
 * host the allow list does not name; and the POST goes to the very address the check looked up
 * ({@link CallbackPost}), the whole delivery within {@code jobs.callbacks.timeout}.
 */
@Startup
@ApplicationScoped
public class CallbackDelivery implements Deliveries {

  private static final Logger LOG = Logger.getLogger(CallbackDelivery.class);

  private final CallbackStore store;
  private final JobsConfig.Callbacks config;
  private final Clock clock;
  private final DownloadLinks links;
  private final ObjectMapper json;
  private final CallbackSignature signature;
  private final JobMetrics metrics;
  private final ExecutorService executor =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "jobs-callbacks");
            t.setDaemon(true);
            return t;
          });
  private final CallbackPost post;

  /** Deliveries under way, by shard ({@code kind/shard}), then by job. */
  private final Map<String, Map<UUID, CompletableFuture<Void>>> inFlight =
      new ConcurrentHashMap<>();

  private final CallbackUrls urls;

  CallbackDelivery(
      CallbackStore store,
      JobsConfig config,
      Clock clock,
      DownloadLinks links,
      ObjectMapper json,
      Instance<JobMetrics> metrics,
      CallbackUrls urls) {
    this.store = store;
    this.urls = urls;
    this.config = config.callbacks();
    this.clock = clock;
    this.links = links;
    this.json = json;
    this.metrics = metrics.isResolvable() ? metrics.get() : null;
    this.signature = signer(config);
    this.post = new CallbackPost((SSLSocketFactory) SSLSocketFactory.getDefault());
  }

  /**
   * The signer of {@code jobs.callbacks.key}, or null without a key.
   *
   * @throws IllegalStateException when the key cannot be used, which stops the service at start
   */
  static CallbackSignature signer(JobsConfig config) {
    if (config.callbacks().key().isEmpty()) {
      return null;
    }
    byte[] key = DownloadLinks.decodeKey(config.callbacks().key().get(), "jobs.callbacks.key");
    Optional<String> links = config.api().signingKey();
    // Receivers hold the callbacks key by design; were it also the download-link key, any of them
    // could sign a download link for any job. Compared as bytes: the same key written another way
    // is the same key.
    if (links.isPresent()
        && MessageDigest.isEqual(
            key, DownloadLinks.decodeKey(links.get(), "jobs.api.signing-key"))) {
      throw new IllegalStateException(
          "jobs.callbacks.key must differ from jobs.api.signing-key: receivers hold the callbacks"
              + " key, and with the download-link key they could sign download links for any job."
              + " Give each its own random key.");
    }
    return new CallbackSignature(key);
  }

  @PreDestroy
  void stop() {
    executor.shutdownNow();
  }

  /**
   * Starts the shard's due deliveries, as many as its {@code jobs.callbacks.max-in-flight} allows;
   * each one that ends starts the next due one of its shard at once, so a burst of ended jobs is
   * called back without waiting for ticks. Without a key (it was removed while callbacks were due)
   * each due callback is given up, saying why, rather than left due for ever.
   */
  @Override
  public void deliverDue(String kind, String shard, long epoch, Instant now) {
    deliverDue(new Scope(kind, shard, null), epoch, now);
  }

  /** As {@link #deliverDue(String, String, long, Instant)}, for the kind's retired shards. */
  @Override
  public void deliverRetired(String kind, List<String> mapped, long epoch, Instant now) {
    deliverDue(new Scope(kind, null, List.copyOf(mapped)), epoch, now);
  }

  /**
   * Whose due callbacks a take looks for: one shard's, or (shard null) those of the kind's shards
   * that {@code mapped} does not name.
   */
  private record Scope(String kind, String shard, List<String> mapped) {

    /** Its key among the deliveries under way; a shard key never holds a slash. */
    String key() {
      return shard != null ? kind + "/" + shard : kind + "/retired";
    }
  }

  private void deliverDue(Scope scope, long epoch, Instant now) {
    Map<UUID, CompletableFuture<Void>> running =
        inFlight.computeIfAbsent(scope.key(), k -> new ConcurrentHashMap<>());
    List<Job> taken;
    Instant lease = now.plus(config.timeout().multipliedBy(2)).truncatedTo(ChronoUnit.MILLIS);
    synchronized (running) {
      running.values().removeIf(CompletableFuture::isDone);
      int room = config.maxInFlight() - running.size();
      if (room <= 0) {
        return;
      }
      taken = take(scope, epoch, now, lease, room);
      // Only a take that filled the room may have left due callbacks behind: each delivery of it
      // that ends looks for the next; otherwise the next tick or wake-up does.
      boolean more = taken.size() == room;
      for (Job job : taken) {
        running.put(
            job.uid,
            CompletableFuture.runAsync(() -> deliver(job, lease), executor)
                .exceptionally(
                    e -> {
                      LOG.warnf(e, "callback of job %s: delivery failed unexpectedly", job.uid);
                      return null;
                    })
                .thenRun(
                    () -> {
                      if (more) {
                        next(scope, epoch);
                      }
                    }));
      }
    }
  }

  /** After a delivery: the scope's next due one, if any, under the same epoch (fenced). */
  private void next(Scope scope, long epoch) {
    try {
      deliverDue(scope, epoch, clock.now());
    } catch (RuntimeException e) {
      LOG.debugf("callbacks of %s: the next delivery waits for a tick (%s)", scope.key(), e);
    }
  }

  /** Waits until no delivery is under way, those the ended ones started too; for tests. */
  public boolean awaitIdle(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      List<CompletableFuture<Void>> open = new ArrayList<>();
      inFlight
          .values()
          .forEach(m -> m.values().stream().filter(f -> !f.isDone()).forEach(open::add));
      if (open.isEmpty()) {
        return true;
      }
      for (CompletableFuture<Void> f : open) {
        try {
          f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
          // recorded by exceptionally
        } catch (java.util.concurrent.TimeoutException e) {
          return false;
        }
      }
    }
  }

  /** The scope's due callbacks, at most {@code limit}, each now leased until {@code lease}. */
  private List<Job> take(Scope scope, long epoch, Instant now, Instant lease, int limit) {
    return scope.shard() != null
        ? store.takeDue(scope.kind(), scope.shard(), epoch, now, lease, limit)
        : store.takeRetired(scope.kind(), scope.mapped(), epoch, now, lease, limit);
  }

  /** Sends one callback and records what became of it. */
  private void deliver(Job job, Instant lease) {
    Map<String, Object> state =
        job.callback == null ? new LinkedHashMap<>() : new LinkedHashMap<>(job.callback);
    int attempt = (state.get("attempts") instanceof Number n ? n.intValue() : 0) + 1;
    Integer status = null;
    String error = null;
    if (signature == null) {
      record(job, lease, state, attempt, null, "this deployment sends no callbacks any more", true);
      return;
    }
    URI target = URI.create(job.callbackUrl);
    // One deadline for the whole delivery, the lookup included: it ends well within its lease
    // (twice the timeout), so no second delivery of the same callback starts while it runs.
    long deadline = System.nanoTime() + config.timeout().toNanos();
    try {
      List<InetAddress> addresses = urls.checkAddress(target, deadline);
      byte[] body = json.writeValueAsBytes(JobView.of(job, links));
      long t = clock.now().getEpochSecond();
      Map<String, String> headers = new LinkedHashMap<>();
      headers.put("Content-Type", "application/json");
      headers.put("User-Agent", "async-jobs");
      headers.put("X-Async-Jobs-Delivery", job.uid + "/" + attempt);
      headers.put(CallbackSignature.HEADER, signature.sign(t, body));
      status = post.send(target, addresses, headers, body, deadline);
      if (status / 100 != 2) {
        error = "HTTP " + status;
      }
    } catch (CallbackUrls.RefusedAddressException e) {
      record(job, lease, state, attempt, null, "refused: " + e.getMessage(), true);
      return;
    } catch (JsonProcessingException e) {
      error = "the status view could not be written";
      LOG.warnf(e, "callback of job %s: the status view could not be written", job.uid);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return; // shutting down: the lease runs out and the next owner sends it again
    } catch (Exception e) {
      // The caller sees what kind of trouble it was, not the exception's text: that would tell
      // whoever can enqueue what answers where inside the cluster. Operators find it logged.
      error = transportError(e);
      LOG.debugf("callback of job %s to %s: %s", job.uid, job.callbackUrl, e);
    }
    record(job, lease, state, attempt, status, error, false);
  }

  /** What a caller is told of a delivery that got no HTTP answer. */
  static String transportError(Exception e) {
    if (e instanceof java.net.http.HttpConnectTimeoutException) {
      return "no connection within the timeout";
    }
    if (e instanceof java.net.http.HttpTimeoutException) {
      return "no answer within the timeout";
    }
    if (e instanceof java.net.ConnectException) {
      return "could not connect";
    }
    return "the connection failed";
  }

  /**
   * Records what became of one delivery: delivered without an error; otherwise due again after a
   * backoff, or given up when {@code giveUp} says so or the give-up time would pass first.
   */
  private void record(
      Job job,
      Instant lease,
      Map<String, Object> state,
      int attempt,
      Integer status,
      String error,
      boolean giveUp) {
    Instant now = clock.now();
    state.put("attempts", attempt);
    state.put("last_status", status);
    state.put("last_error", error);
    state.put("last_attempt_at", now.toString());
    Instant next = null;
    String outcome;
    if (error == null) {
      state.put("delivered_at", now.toString());
      outcome = "delivered";
    } else {
      Instant ended = job.completedAt != null ? job.completedAt : job.updatedAt;
      Instant candidate = now.plus(backoff(attempt));
      if (giveUp || ended == null || candidate.isAfter(ended.plus(config.giveUpAfter()))) {
        state.put("gave_up_at", now.toString());
        outcome = "gave-up";
        LOG.warnf(
            "callback of job %s to %s: given up after %d deliveries (last: %s)",
            job.uid, job.callbackUrl, attempt, error);
      } else {
        next = candidate;
        outcome = "failed";
        LOG.debugf("callback of job %s: delivery %d failed (%s)", job.uid, attempt, error);
      }
    }
    write(job, lease, state, next);
    count(job.kind, outcome);
  }

  /** JobCallbackRecord for one delivery, while its lease stands. */
  private void write(Job job, Instant lease, Map<String, Object> state, Instant next) {
    try {
      store.record(job.uid, lease, state, next);
    } catch (SQLException e) {
      // The lease runs out and the callback is sent again: at least once.
      LOG.warnf("callback of job %s: its outcome could not be recorded (%s)", job.uid, e);
    }
  }

  /** The wait after the {@code attempt}-th failed delivery: doubled each time, jittered. */
  private Duration backoff(int attempt) {
    return Backoff.delay(
        config.backoff(), config.backoffMax(), attempt, ThreadLocalRandom.current().nextDouble());
  }

  private void count(String kind, String outcome) {
    if (metrics != null) {
      metrics.callback(kind, outcome);
    }
  }
}
