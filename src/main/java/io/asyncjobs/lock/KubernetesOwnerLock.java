package io.asyncjobs.lock;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.jboss.logging.Logger;

/**
 * The owner lock as a Kubernetes Lease, with an election loop of our own on fabric8's typed client.
 * One thread, every retry period, reads the Lease and then renews it (holder), takes it (free, or
 * unchanged for a whole lease duration) or waits. It never stops competing: every error is logged,
 * counted and retried at the next period.
 *
 * <p>Why not fabric8's {@code LeaderElector}: in 7.5.2 an elector whose renewal failed once
 * finishes and never competes again, and it decides that a Lease has expired by comparing the
 * holder's wall-clock renew time with its own wall clock, so a candidate whose clock runs ahead
 * takes over while the holder still trusts itself. Here, as in client-go, a candidate measures a
 * Lease's age on its own monotonic clock from the moment it first saw the Lease's current version,
 * and the holder trusts a renewal from the moment it sent it; wall clocks only fill the Lease's
 * timestamps for people to read. Every write is a JSON merge patch carrying the version it read, so
 * the server refuses it when anyone else wrote in between.
 */
public final class KubernetesOwnerLock extends HeldLock {

  /** A Lease's times are RFC 3339 with exactly six fraction digits. */
  private static final DateTimeFormatter MICRO_TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX");

  private static final Logger LOG = Logger.getLogger(KubernetesOwnerLock.class);

  private final KubernetesClient client;
  private final String namespace;
  private final Duration leaseDuration;
  private final Duration renewDeadline;
  private final Duration retryPeriod;
  private final Duration takeoverMargin;
  private final Epochs.Source epochs;
  private final LockMetrics metrics;
  private final Clock wallClock;
  private final LongSupplier nanos;
  private final long stalledAfterNanos;
  private final ScheduledExecutorService timer;

  private volatile boolean released;
  private volatile long lastAttemptNanos;

  /** The Lease's holder at the last read, or null when it named none. */
  private volatile String seenHolder;

  /** The version of the Lease last seen held by another replica, and when it was first seen. */
  private String observedVersion;

  private long observedAtNanos;
  private String lastError;

  /**
   * A candidate for the Lease {@code namespace/name}; call {@link #start()} to compete.
   *
   * @param client a client whose requests time out well within the renew deadline
   * @param takeoverMargin how long an earlier holder may take, past its renew deadline, to
   *     interrupt its jobs; a takeover of an expired Lease waits for whatever of it the lease
   *     duration does not already cover before treating those jobs as abandoned
   * @param epochs hands out a larger fencing epoch on every call
   */
  public KubernetesOwnerLock(
      KubernetesClient client,
      String namespace,
      String name,
      String identity,
      Duration leaseDuration,
      Duration renewDeadline,
      Duration retryPeriod,
      Duration takeoverMargin,
      Epochs.Source epochs,
      LockMetrics metrics) {
    this(
        client,
        namespace,
        name,
        identity,
        leaseDuration,
        renewDeadline,
        retryPeriod,
        takeoverMargin,
        epochs,
        metrics,
        Clock.systemUTC(),
        System::nanoTime);
  }

  /** As above, with the clocks given: {@code wallClock} fills the Lease's timestamps only. */
  KubernetesOwnerLock(
      KubernetesClient client,
      String namespace,
      String name,
      String identity,
      Duration leaseDuration,
      Duration renewDeadline,
      Duration retryPeriod,
      Duration takeoverMargin,
      Epochs.Source epochs,
      LockMetrics metrics,
      Clock wallClock,
      LongSupplier nanos) {
    super(
        "kubernetes",
        name,
        identity,
        new Holding(identity, renewDeadline, retryPeriod, nanos, metrics));
    this.client = client;
    this.namespace = Objects.requireNonNull(namespace, "namespace");
    this.leaseDuration = leaseDuration;
    this.renewDeadline = renewDeadline;
    this.retryPeriod = retryPeriod;
    this.takeoverMargin = takeoverMargin;
    this.epochs = epochs;
    this.metrics = metrics;
    this.wallClock = wallClock;
    this.nanos = nanos;
    // An attempt makes at most two requests, each bounded by the client's request timeout, which
    // the producer keeps below the renew deadline.
    this.stalledAfterNanos =
        retryPeriod.multipliedBy(3).plus(renewDeadline.multipliedBy(2)).toNanos();
    this.lastAttemptNanos = nanos.getAsLong();
    this.timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread thread = new Thread(r, "jobs-owner-lease");
              thread.setDaemon(true);
              return thread;
            });
  }

  /** Starts competing: a first attempt at once, then one every retry period. */
  public void start() {
    timer.scheduleWithFixedDelay(this::attempt, 0, retryPeriod.toMillis(), TimeUnit.MILLISECONDS);
  }

  @Override
  public void attemptSoon() {
    if (!released) {
      try {
        timer.execute(this::attempt);
      } catch (RejectedExecutionException e) {
        // Shutting down.
      }
    }
  }

  @Override
  boolean competing() {
    return !released && nanos.getAsLong() - lastAttemptNanos < stalledAfterNanos;
  }

  @Override
  public synchronized void release() {
    if (released) {
      return;
    }
    released = true;
    timer.shutdownNow();
    if (holding.held() || holding.trust() != Trust.NONE) {
      giveUp();
      LOG.infof("Released the Lease %s/%s (epoch %d)", namespace, name, holding.epoch());
    }
    holding.lost(null);
  }

  @Override
  public String holder() {
    return isOwner() ? identity : seenHolder;
  }

  @Override
  public synchronized void relinquish() {
    if (released || (!holding.held() && holding.trust() == Trust.NONE)) {
      return;
    }
    long epoch = holding.epoch();
    giveUp();
    holding.lost(null);
    LOG.infof(
        "%s gave the Lease %s/%s up (epoch %d) for another replica",
        identity, namespace, name, epoch);
  }

  /** Stops competing without touching the Lease, as a process that died would. For tests. */
  void abandon() {
    released = true;
    timer.shutdownNow();
    holding.lost(null);
  }

  /** One round of the election; never throws, so the timer never stops. */
  synchronized void attempt() {
    if (released) {
      return;
    }
    lastAttemptNanos = nanos.getAsLong();
    try {
      elect();
      lastError = null;
    } catch (KubernetesClientException e) {
      failed("the API server answered " + describe(e), e);
    } catch (RuntimeException | Error e) {
      failed("unexpectedly: " + e, e);
    }
  }

  private void failed(String what, Throwable e) {
    metrics.error();
    if (holding.held()) {
      metrics.renewalFailed();
    }
    // One warning per kind of failure, not one every retry period.
    String message = String.valueOf(e.getMessage());
    if (!message.equals(lastError)) {
      lastError = message;
      LOG.warnf(
          "%s: an attempt on the Lease %s/%s failed %s; retrying", identity, namespace, name, what);
    } else {
      LOG.debugf("%s: an attempt on the Lease failed again: %s", identity, message);
    }
  }

  private void elect() {
    long sent = nanos.getAsLong();
    Lease lease = leases().get();
    if (lease == null) {
      if (wanted) {
        create(sent);
      }
      return;
    }
    LeaseSpec spec = lease.getSpec() == null ? new LeaseSpec() : lease.getSpec();
    String holder = spec.getHolderIdentity();
    seenHolder = holder == null || holder.isEmpty() ? null : holder;
    if (identity.equals(holder)) {
      renew(lease, sent);
      return;
    }
    boolean free = holder == null || holder.isEmpty();
    if (!free) {
      if (holding.trust() != Trust.NONE || holding.held()) {
        holding.lost("the Lease names " + holder);
      }
      if (!lease.getMetadata().getResourceVersion().equals(observedVersion)) {
        // A new version: the holder is alive as of now, on our clock.
        observedVersion = lease.getMetadata().getResourceVersion();
        observedAtNanos = nanos.getAsLong();
        return;
      }
      Duration validFor = validFor(spec);
      if (nanos.getAsLong() - observedAtNanos < validFor.toNanos()) {
        return;
      }
      if (!wanted) {
        return;
      }
      LOG.infof(
          "%s: the Lease %s/%s held by %s was not renewed for %s; taking it over",
          identity, namespace, name, holder, validFor);
    } else if (!wanted) {
      return;
    }
    take(lease, spec, sent, free);
  }

  /** How long the Lease stays valid: its own duration, if another holder set a longer one. */
  private Duration validFor(LeaseSpec spec) {
    Integer seconds = spec.getLeaseDurationSeconds();
    Duration own = seconds == null ? Duration.ZERO : Duration.ofSeconds(seconds);
    return own.compareTo(leaseDuration) > 0 ? own : leaseDuration;
  }

  private void create(long sent) {
    ZonedDateTime now = ZonedDateTime.now(wallClock.withZone(ZoneOffset.UTC));
    Lease lease =
        new LeaseBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace(namespace)
            .endMetadata()
            .withNewSpec()
            .withHolderIdentity(identity)
            .withLeaseDurationSeconds(leaseSeconds())
            .withLeaseTransitions(0)
            .withAcquireTime(now)
            .withRenewTime(now)
            .endSpec()
            .build();
    try {
      client.leases().inNamespace(namespace).resource(lease).create();
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409) {
        return; // another candidate created it first; read it next time
      }
      throw e;
    }
    acquired(sent, Duration.ZERO, "created the Lease");
  }

  private void take(Lease lease, LeaseSpec spec, long sent, boolean free) {
    String now = now();
    int transitions = spec.getLeaseTransitions() == null ? 0 : spec.getLeaseTransitions();
    String fields =
        String.format(
            "\"holderIdentity\":\"%s\",\"leaseDurationSeconds\":%d,\"acquireTime\":\"%s\","
                + "\"renewTime\":\"%s\",\"leaseTransitions\":%d",
            identity, leaseSeconds(), now, now, transitions + 1);
    if (!patchSpec(lease, fields)) {
      return; // someone else wrote first
    }
    // A released Lease was handed over with every job settled. An expired one: its holder stopped
    // trusting itself a renew deadline after its last renewal, which we saw at least a lease
    // duration ago; it may still need the takeover margin to interrupt its jobs.
    Duration settle =
        free
            ? Duration.ZERO
            : nonNegative(renewDeadline.plus(takeoverMargin).minus(validFor(spec)));
    acquired(sent, settle, free ? "took the free Lease" : "took over the expired Lease");
  }

  private void renew(Lease lease, long sent) {
    if (!patchSpec(lease, String.format("\"renewTime\":\"%s\"", now()))) {
      return; // someone wrote in between; the next read tells who holds it
    }
    if (holding.lapsed()) {
      // The Lease still names us, so nobody else held it; but the engine gave its jobs up.
      acquired(sent, Duration.ZERO, "renewed the Lease after its deadline");
    } else {
      holding.confirmed(sent);
    }
  }

  /**
   * Takes a fencing epoch for a Lease this replica now holds. Until that succeeds the replica keeps
   * the Lease (renewing it) but is not the owner; the next attempt tries again.
   */
  private void acquired(long sent, Duration settle, String what) {
    long epoch;
    try {
      epoch = epochs.take(identity);
    } catch (Exception e) {
      metrics.error();
      LOG.warnf(
          "%s holds the Lease %s/%s but could not take a fencing epoch (%s); retrying in %s",
          identity, namespace, name, e, retryPeriod);
      return;
    }
    holding.begin(epoch, sent, "Lease " + namespace + "/" + name + ": " + what, settle);
  }

  /**
   * Patches the Lease's spec with {@code fields} (JSON members), as long as it is still at the
   * version read.
   *
   * @return false when the server refused the stale version
   */
  private boolean patchSpec(Lease lease, String fields) {
    String patch =
        String.format(
            "{\"metadata\":{\"resourceVersion\":\"%s\"},\"spec\":{%s}}",
            lease.getMetadata().getResourceVersion(), fields);
    try {
      leases().patch(PatchContext.of(PatchType.JSON_MERGE), patch);
      return true;
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409) {
        return false;
      }
      throw e;
    }
  }

  /**
   * Empties the holder and backdates the renew time past a lease duration, so the next candidate
   * (of this version, or one that still compares renew times) takes the Lease at its next attempt.
   * A Lease another candidate took meanwhile is left alone: the server refuses the stale version.
   */
  private void giveUp() {
    try {
      Lease lease = leases().get();
      if (lease == null
          || lease.getSpec() == null
          || !identity.equals(lease.getSpec().getHolderIdentity())) {
        return;
      }
      String backdated =
          MICRO_TIME.format(
              ZonedDateTime.now(wallClock.withZone(ZoneOffset.UTC))
                  .minus(leaseDuration.multipliedBy(2)));
      patchSpec(lease, String.format("\"holderIdentity\":null,\"renewTime\":\"%s\"", backdated));
    } catch (RuntimeException e) {
      LOG.debugf("Could not give the Lease up: %s", e.getMessage());
    }
  }

  private io.fabric8.kubernetes.client.dsl.Resource<Lease> leases() {
    return client.leases().inNamespace(namespace).withName(name);
  }

  private int leaseSeconds() {
    return (int) Math.max(1, leaseDuration.toSeconds());
  }

  private String now() {
    return MICRO_TIME.format(ZonedDateTime.now(wallClock.withZone(ZoneOffset.UTC)));
  }

  private static Duration nonNegative(Duration d) {
    return d.isNegative() ? Duration.ZERO : d;
  }

  private static String describe(KubernetesClientException e) {
    return e.getCode() > 0
        ? e.getCode() + " (" + e.getMessage() + ")"
        : "nothing: " + e.getMessage();
  }
}
