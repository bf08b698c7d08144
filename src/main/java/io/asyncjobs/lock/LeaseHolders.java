package io.asyncjobs.lock;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpec;
import java.time.Instant;
import java.time.ZonedDateTime;

/**
 * Who holds a Lease as an onlooker reads it once: its holder while its last renewal is within its
 * duration of {@code now}. An owner lock judges takeovers on its own monotonic clock instead (see
 * {@link KubernetesOwnerLock}); this wall-clock reading is for reports and for waiting, where a few
 * seconds of skew only move the answer by as much.
 */
public final class LeaseHolders {

  private LeaseHolders() {}

  /** The holder of {@code lease} at {@code now}, or null when it has none or it expired. */
  public static String liveHolder(Lease lease, Instant now) {
    LeaseSpec spec = lease == null ? null : lease.getSpec();
    if (spec == null) {
      return null;
    }
    String holder = spec.getHolderIdentity();
    ZonedDateTime renewed = spec.getRenewTime();
    Integer seconds = spec.getLeaseDurationSeconds();
    if (holder == null || holder.isEmpty() || renewed == null || seconds == null) {
      return null;
    }
    return renewed.toInstant().plusSeconds(seconds).isAfter(now) ? holder : null;
  }
}
