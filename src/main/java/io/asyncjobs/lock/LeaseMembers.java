package io.asyncjobs.lock;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;
import org.jboss.logging.Logger;

/**
 * The members in Kubernetes mode: one Lease, {@code <name>-members}, on which each replica keeps an
 * annotation {@value #KEY_PREFIX}{@code <identity>} holding the time of its last heartbeat. One
 * named object, so a Role can grant exactly it. A member counts as alive while its annotation keeps
 * changing: like the owner Lease, its age is measured on this replica's monotonic clock from the
 * moment the current value was first seen, so clocks that disagree do not make a live replica look
 * dead (a value whose time is far older than the window is dead at once). The window is the {@code
 * liveFor} given (the producer gives the renew deadline); entries unchanged for two windows are
 * removed.
 */
public final class LeaseMembers implements Members {

  private static final Logger LOG = Logger.getLogger(LeaseMembers.class);

  /** The annotations' prefix; the name part is the replica's identity. */
  static final String KEY_PREFIX = "members.async-jobs.io/";

  private final KubernetesClient client;
  private final String namespace;
  private final String name;
  private final String self;
  private final Duration leaseDuration;
  private final Clock wallClock;
  private final LongSupplier nanos;

  /** Each member's last value and when it was first seen, on the monotonic clock. */
  private final Map<String, Seen> seen = new HashMap<>();

  private record Seen(String value, long sinceNanos) {}

  public LeaseMembers(
      KubernetesClient client,
      String namespace,
      String name,
      String identity,
      Duration leaseDuration,
      Clock wallClock,
      LongSupplier nanos) {
    this.client = client;
    this.namespace = namespace;
    this.name = name;
    this.self = memberName(identity);
    this.leaseDuration = leaseDuration;
    this.wallClock = wallClock;
    this.nanos = nanos;
  }

  /**
   * The name part of a member's annotation key: the identity when it is a valid one (at most 63
   * characters of letters, digits, {@code -_.}, beginning and ending with a letter or digit), else
   * a valid prefix of it and a hash of the whole.
   */
  static String memberName(String identity) {
    if (identity.matches("[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")) {
      return identity;
    }
    String hash = String.format("%08x", identity.hashCode() & 0xffffffffL);
    String cleaned = identity.replaceAll("[^-A-Za-z0-9_.]", "-").replaceAll("^[^A-Za-z0-9]+", "");
    return cleaned.substring(0, Math.min(cleaned.length(), 63 - 9)) + "-" + hash;
  }

  @Override
  public synchronized void beat() {
    String patch =
        String.format(
            "{\"metadata\":{\"annotations\":{\"%s%s\":\"%s\"}}}",
            KEY_PREFIX, self, Instant.now(wallClock));
    try {
      lease().patch(PatchContext.of(PatchType.JSON_MERGE), patch);
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404) {
        throw e;
      }
      create();
    }
  }

  private void create() {
    Lease lease =
        new LeaseBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace(namespace)
            .addToAnnotations(KEY_PREFIX + self, Instant.now(wallClock).toString())
            .endMetadata()
            .withNewSpec()
            .endSpec()
            .build();
    try {
      client.leases().inNamespace(namespace).resource(lease).create();
    } catch (KubernetesClientException e) {
      if (e.getCode() != 409) {
        throw e;
      }
      // Another replica created it first; the next beat patches it.
    }
  }

  @Override
  public synchronized Set<String> live() {
    Lease lease = lease().get();
    Set<String> live = new HashSet<>();
    live.add(self);
    if (lease == null) {
      return live;
    }
    Map<String, String> annotations =
        lease.getMetadata().getAnnotations() == null
            ? Map.of()
            : lease.getMetadata().getAnnotations();
    long now = nanos.getAsLong();
    Map<String, String> stale = new HashMap<>();
    Set<String> present = new HashSet<>();
    for (Map.Entry<String, String> e : annotations.entrySet()) {
      if (!e.getKey().startsWith(KEY_PREFIX) || e.getValue() == null || e.getValue().isEmpty()) {
        continue; // not a member's, or one removed (a server may keep a nulled key as empty)
      }
      String member = e.getKey().substring(KEY_PREFIX.length());
      present.add(member);
      Seen before = seen.get(member);
      if (before == null || !before.value().equals(e.getValue())) {
        before = new Seen(e.getValue(), now);
        seen.put(member, before);
      }
      long age = now - before.sinceNanos();
      if (age < leaseDuration.toNanos() && !longAgo(e.getValue())) {
        live.add(member);
      } else if (age >= leaseDuration.multipliedBy(2).toNanos() && !member.equals(self)) {
        stale.put(member, e.getValue());
      }
    }
    seen.keySet().retainAll(present);
    if (!stale.isEmpty()) {
      prune(lease, stale.keySet());
    }
    return live;
  }

  /** Whether a heartbeat's time is more than two lease durations before this replica's now. */
  private boolean longAgo(String value) {
    try {
      return Instant.parse(value)
          .isBefore(Instant.now(wallClock).minus(leaseDuration.multipliedBy(2)));
    } catch (DateTimeParseException e) {
      return false; // not a time: judged by change alone
    }
  }

  /** Removes dead members' annotations, unless someone wrote the Lease meanwhile. */
  private void prune(Lease lease, Set<String> members) {
    StringBuilder nulls = new StringBuilder();
    for (String member : members) {
      if (nulls.length() > 0) {
        nulls.append(',');
      }
      nulls.append('"').append(KEY_PREFIX).append(member).append("\":null");
    }
    String patch =
        String.format(
            "{\"metadata\":{\"resourceVersion\":\"%s\",\"annotations\":{%s}}}",
            lease.getMetadata().getResourceVersion(), nulls);
    try {
      lease().patch(PatchContext.of(PatchType.JSON_MERGE), patch);
      LOG.infof("Removed replicas that stopped beating from %s: %s", name, members);
    } catch (KubernetesClientException e) {
      LOG.debugf("Could not remove stale members from %s now: %s", name, e.getMessage());
    }
  }

  @Override
  public String self() {
    return self;
  }

  private Resource<Lease> lease() {
    return client.leases().inNamespace(namespace).withName(name);
  }
}
