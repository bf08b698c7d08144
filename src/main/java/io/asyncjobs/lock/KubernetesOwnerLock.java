package io.asyncjobs.lock;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElector;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.jboss.logging.Logger;

/**
 * The owner lock as a Kubernetes Lease, elected with fabric8's {@link LeaderElector}. The elector
 * renews the Lease; this class does not take its word for it. It reads the Lease every retry period
 * and counts a renewal as confirmed only when the Lease names this replica and its renew time has
 * moved since the last read. Once the last confirmed renewal is older than the renew deadline, the
 * replica stops claiming even if the elector never called its stop callback (it has been seen not
 * to when reads succeed and writes fail). The fencing epoch comes from the database sequence, not
 * from the Lease's transition count, because that count does not move when the same pod takes the
 * Lease back, and every holding needs a larger epoch than the one before.
 */
public final class KubernetesOwnerLock implements OwnerLock {

  /** A Lease's times are RFC 3339 with exactly six fraction digits. */
  private static final DateTimeFormatter MICRO_TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX");

  private static final Logger LOG = Logger.getLogger(KubernetesOwnerLock.class);

  private final KubernetesClient client;
  private final String namespace;
  private final String name;
  private final String identity;
  private final Duration leaseDuration;
  private final Duration renewDeadline;
  private final Duration retryPeriod;
  private final LongSupplier nextEpoch;
  private final LockMetrics metrics;
  private final ScheduledExecutorService observer;

  private final Holding holding;

  private volatile LeaderElector elector;
  private volatile CompletableFuture<?> election;
  private volatile boolean released;
  private volatile Object lastRenewTime;

  /**
   * A candidate for the Lease {@code namespace/name}; call {@link #start()} to compete.
   *
   * @param nextEpoch hands out a larger fencing epoch on every call
   */
  public KubernetesOwnerLock(
      KubernetesClient client,
      String namespace,
      String name,
      String identity,
      Duration leaseDuration,
      Duration renewDeadline,
      Duration retryPeriod,
      LongSupplier nextEpoch,
      LockMetrics metrics) {
    this.client = client;
    this.namespace = Objects.requireNonNull(namespace, "namespace");
    this.name = name;
    this.identity = identity;
    this.leaseDuration = leaseDuration;
    this.renewDeadline = renewDeadline;
    this.retryPeriod = retryPeriod;
    this.nextEpoch = nextEpoch;
    this.metrics = metrics;
    this.holding = new Holding(identity, renewDeadline, metrics);
    this.observer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread thread = new Thread(r, "jobs-owner-lease");
              thread.setDaemon(true);
              return thread;
            });
  }

  /** Starts the election and the renewal observer. */
  public void start() {
    startElection();
    observer.scheduleWithFixedDelay(
        this::observe, retryPeriod.toMillis(), retryPeriod.toMillis(), TimeUnit.MILLISECONDS);
  }

  private synchronized void startElection() {
    elector =
        client
            .leaderElector()
            .withConfig(
                new LeaderElectionConfigBuilder()
                    .withName(name)
                    .withLock(new LeaseLock(namespace, name, identity))
                    .withLeaseDuration(leaseDuration)
                    .withRenewDeadline(renewDeadline)
                    .withRetryPeriod(retryPeriod)
                    .withReleaseOnCancel(true)
                    .withLeaderCallbacks(
                        new LeaderCallbacks(
                            this::onStartLeading, this::onStopLeading, leader -> {}))
                    .build())
            .build();
    election = elector.start();
  }

  @Override
  public boolean isOwner() {
    return holding.trusted();
  }

  @Override
  public long epoch() {
    return holding.epoch();
  }

  @Override
  public String identity() {
    return identity;
  }

  @Override
  public OwnerStatus status() {
    return holding.status("kubernetes");
  }

  @Override
  public synchronized void release() {
    if (released) {
      return;
    }
    released = true;
    observer.shutdownNow();
    LeaderElector current = elector;
    if (current != null && holding.held()) {
      current.release();
      expireLease();
      LOG.infof("Released the Lease %s/%s (epoch %d)", namespace, name, holding.epoch());
    }
    CompletableFuture<?> running = election;
    if (running != null) {
      running.cancel(true);
    }
    holding.end(null);
  }

  /** Stops competing and renewing; releases only if the elector can still reach the server. */
  void abandon() {
    released = true;
    observer.shutdownNow();
    LeaderElector current = elector;
    elector = null;
    CompletableFuture<?> running = election;
    if (running != null) {
      running.cancel(true);
    }
    holding.end(null);
    if (current != null) {
      LOG.debugf("%s abandoned the Lease", identity);
    }
  }

  /**
   * The elector's release still leaves the Lease valid for a second; backdating its renew time past
   * a lease duration lets the next candidate take it at its very next attempt.
   */
  private void expireLease() {
    // The same kind of write the elector renews with (a JSON merge patch carrying the
    // resourceVersion), so the Role needs no other verb, and a Lease another candidate took
    // meanwhile is left alone: the server refuses the stale version.
    try {
      Lease lease = client.leases().inNamespace(namespace).withName(name).get();
      if (lease == null
          || lease.getSpec() == null
          || (lease.getSpec().getHolderIdentity() != null
              && !identity.equals(lease.getSpec().getHolderIdentity()))) {
        return;
      }
      String renewTime =
          MICRO_TIME.format(ZonedDateTime.now(ZoneOffset.UTC).minus(leaseDuration.multipliedBy(2)));
      String patch =
          String.format(
              "{\"metadata\":{\"resourceVersion\":\"%s\"},"
                  + "\"spec\":{\"holderIdentity\":null,\"renewTime\":\"%s\"}}",
              lease.getMetadata().getResourceVersion(), renewTime);
      client
          .leases()
          .inNamespace(namespace)
          .withName(name)
          .patch(PatchContext.of(PatchType.JSON_MERGE), patch);
    } catch (RuntimeException e) {
      LOG.debugf("Could not expire the released Lease: %s", e.getMessage());
    }
  }

  private void onStartLeading() {
    lastRenewTime = null;
    holding.begin(nextEpoch.getAsLong(), "Lease " + namespace + "/" + name);
  }

  private void onStopLeading() {
    holding.end("the elector stopped leading");
  }

  /** Confirms a renewal by reading the Lease; never throws. */
  void observe() {
    if (!holding.held()) {
      return;
    }
    try {
      Lease lease = client.leases().inNamespace(namespace).withName(name).get();
      if (lease == null || lease.getSpec() == null) {
        metrics.renewalFailed();
        return;
      }
      if (!identity.equals(lease.getSpec().getHolderIdentity())) {
        metrics.renewalFailed();
        holding.end("the Lease names " + lease.getSpec().getHolderIdentity());
        return;
      }
      Object renewTime = lease.getSpec().getRenewTime();
      if (renewTime != null && !renewTime.equals(lastRenewTime)) {
        lastRenewTime = renewTime;
        holding.confirmed();
      }
    } catch (RuntimeException e) {
      metrics.renewalFailed();
      LOG.debugf("Reading the Lease failed: %s", e.getMessage());
    }
  }
}
