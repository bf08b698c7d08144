package io.asyncjobs.lock;

import io.asyncjobs.config.Shards;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

/**
 * Shows who owns the job queue in {@code /q/health}. Up whether or not this replica owns: a replica
 * that does not own still serves requests, so ownership must not take it out of the Service. Down
 * only when the replica no longer competes for the lock (it was released, or its attempts hang),
 * since such a replica could never take over.
 */
@Readiness
@ApplicationScoped
public class OwnerHealthCheck implements HealthCheck {

  private final OwnerLocks locks;

  OwnerHealthCheck(OwnerLocks locks) {
    this.locks = locks;
  }

  @Override
  public HealthCheckResponse call() {
    Map<String, OwnerLock> all = locks.all();
    if (all.isEmpty()) {
      return HealthCheckResponse.named("owner lock")
          .up()
          .withData("identity", locks.identity())
          .withData("shards", "none yet")
          .build();
    }
    if (all.size() > 1 || !all.containsKey(Shards.ALL)) {
      return sharded(all);
    }
    OwnerStatus status = all.values().iterator().next().status();
    HealthCheckResponseBuilder response =
        HealthCheckResponse.named("owner lock")
            .status(status.competing())
            .withData("mode", status.mode())
            .withData("identity", status.identity())
            .withData("owner", status.owner())
            .withData("epoch", status.epoch())
            .withData("trust", status.trust().name().toLowerCase(java.util.Locale.ROOT))
            .withData("competing", status.competing());
    if (status.since() != null) {
      response.withData("since", status.since().toString());
    }
    return response.build();
  }

  /**
   * With shards: down when some shard's lock no longer competes; the data name the shards this
   * replica owns and those it could not compete for.
   */
  private HealthCheckResponse sharded(Map<String, OwnerLock> all) {
    List<String> owned = new ArrayList<>();
    List<String> stalled = new ArrayList<>();
    String mode = null;
    for (java.util.Map.Entry<String, OwnerLock> e : new TreeMap<>(all).entrySet()) {
      OwnerStatus status = e.getValue().status();
      mode = status.mode();
      if (status.owner()) {
        owned.add(e.getKey());
      }
      if (!status.competing()) {
        stalled.add(e.getKey());
      }
    }
    HealthCheckResponseBuilder response =
        HealthCheckResponse.named("owner lock")
            .status(stalled.isEmpty())
            .withData("mode", mode)
            .withData("identity", locks.identity())
            .withData("shards", all.size())
            .withData("owned", String.join(",", owned));
    if (!stalled.isEmpty()) {
      response.withData("not competing", String.join(",", stalled));
    }
    return response.build();
  }
}
