package io.asyncjobs.engine;

import io.asyncjobs.lock.Members;
import io.asyncjobs.lock.OlderRelease;
import io.asyncjobs.lock.OwnerLock;
import io.asyncjobs.lock.OwnerLocks;
import io.asyncjobs.lock.Trust;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * Spreads the shards evenly over the live replicas, each kind's as well as all of them. Every round
 * (each retry period) it reads who is alive (the heartbeat has a schedule of its own, so a long
 * handover does not make this replica look gone) and works out this replica's target in each kind:
 * the live replicas in name order each get {@code shards / live} of the kind's shards, and {@code
 * shards % live} of them one more, the extras of one kind starting where the previous kind's
 * stopped; so each kind is spread as far as it can be, the targets add up to the shards, and no
 * replica's total exceeds ceil(shards / live). A replica over its target hands the extras over
 * (those it took last), with the same graceful handover as a shutdown: claiming stops, running jobs
 * get the handover grace, the rest go back to pending without a retry, then the lock is given up
 * and the release announced. A replica under its target competes for every shard it does not hold;
 * one at its target competes for none. Two replicas under target may both take a free shard in one
 * round; the one over its target then hands its newest back.
 *
 * <p>While a replica of a release before shards holds the unsharded lock (it claims and rescues
 * every kind's rows, whatever their shard), this replica hands every shard over and competes for
 * none, and says so once; the balance resumes when that holding ends.
 *
 * <p>With the unsharded default there is one lock and nothing to balance: this never runs.
 */
final class ShardBalancer {

  private static final Logger LOG = Logger.getLogger(ShardBalancer.class);

  private final Members members;
  private final OwnerLocks locks;
  private final Runnable announce;
  private final Supplier<Map<String, List<String>>> shards;
  private final ShardHandOver handOver;
  private final OlderRelease olderRelease;

  /**
   * Hands one shard's jobs back (every kind's runner of it), runs {@code whileDrained} while no
   * runner of the shard may claim, and returns how many jobs went back to pending.
   */
  @FunctionalInterface
  interface ShardHandOver {
    int handOver(String shard, Runnable whileDrained);
  }

  /** The last failure to read the members, so that a streak is logged once. */
  private String lastError;

  /** The live count and target the last round logged: a change is logged once. */
  private int loggedLive;

  private int loggedTarget = -1;

  /** The older release's holder the last round logged, or null while there is none. */
  private String loggedOlder;

  /** The last failure to tell whether an older release holds the lock, logged once. */
  private String olderReleaseError;

  ShardBalancer(
      Members members,
      OwnerLocks locks,
      Runnable announce,
      Supplier<Map<String, List<String>>> shards,
      ShardHandOver handOver,
      OlderRelease olderRelease) {
    this.members = members;
    this.locks = locks;
    this.announce = announce;
    this.shards = shards;
    this.handOver = handOver;
    this.olderRelease = olderRelease;
  }

  /** One round; never throws, so that the schedule never stops. */
  void balance() {
    try {
      round();
    } catch (RuntimeException | Error e) {
      LOG.errorf(e, "A round of the balance failed; the next one tries again");
    }
  }

  private void round() {
    Set<String> live;
    try {
      live = members.live();
    } catch (Exception e) {
      // Without a view of the others, keep what is owned and the competition as it is.
      String message = String.valueOf(e);
      if (!message.equals(lastError)) {
        lastError = message;
        LOG.warnf("Could not read the live replicas; the shards stay as they are: %s", message);
      } else {
        LOG.debugf("Could not read the live replicas again: %s", message);
      }
      return;
    }
    if (lastError != null) {
      lastError = null;
      LOG.info("The live replicas can be read again");
    }
    if (olderReleaseHolds(live.size())) {
      return;
    }
    // Only shards whose lock exists: a retired shard dropped meanwhile must not get it back.
    Map<String, OwnerLock> existing = locks.all();
    Map<String, List<String>> groups = new TreeMap<>();
    shards
        .get()
        .forEach(
            (group, keys) -> {
              List<String> present =
                  keys.stream().distinct().filter(existing::containsKey).sorted().toList();
              if (!present.isEmpty()) {
                groups.put(group, present);
              }
            });
    if (groups.isEmpty()) {
      return;
    }
    Map<String, Integer> targets = targetsOf(members.self(), live, groups);
    int target = 0;
    int total = 0;
    List<String> owned = new ArrayList<>();
    for (Map.Entry<String, List<String>> group : groups.entrySet()) {
      int groupTarget = targets.get(group.getKey());
      target += groupTarget;
      total += group.getValue().size();
      List<String> ownedHere = new ArrayList<>();
      for (String key : group.getValue()) {
        if (existing.get(key).trust() != Trust.NONE) {
          ownedHere.add(key);
        }
      }
      if (ownedHere.size() > groupTarget) {
        List<String> newestFirst =
            ownedHere.stream()
                .sorted(Comparator.comparing((String key) -> since(existing.get(key))).reversed())
                .toList();
        for (String key : newestFirst.subList(0, ownedHere.size() - groupTarget)) {
          if (giveUp(key, existing.get(key), live.size(), groupTarget)) {
            ownedHere.remove(key);
          }
        }
      }
      boolean wantMore = ownedHere.size() < groupTarget;
      for (String key : group.getValue()) {
        if (!ownedHere.contains(key)) {
          existing.get(key).compete(wantMore);
        }
      }
      owned.addAll(ownedHere);
    }
    if (live.size() != loggedLive || target != loggedTarget) {
      loggedLive = live.size();
      loggedTarget = target;
      LOG.infof(
          "%d replica(s) alive: this one's share is %d of %d shard(s); it owns %s",
          live.size(), target, total, owned);
    }
  }

  /**
   * This replica's target in each group of shards (a kind's): the group's shards / live each, and
   * one more for {@code shards % live} of the replicas in name order, starting where the previous
   * group's extras stopped. Each kind is spread as evenly as it can be, and the totals differ by at
   * most one, so nobody's exceeds ceil(all shards / live).
   */
  static Map<String, Integer> targetsOf(
      String self, Set<String> live, Map<String, List<String>> groups) {
    List<String> sorted = live.stream().sorted().toList();
    int n = sorted.size();
    int index = sorted.indexOf(self);
    Map<String, Integer> targets = new TreeMap<>();
    int offset = 0;
    for (Map.Entry<String, List<String>> group : new TreeMap<>(groups).entrySet()) {
      int m = group.getValue().size();
      int extra = m % n;
      int turn = Math.floorMod(index - offset, n);
      targets.put(group.getKey(), m / n + (index >= 0 && turn < extra ? 1 : 0));
      offset = (offset + extra) % n;
    }
    return targets;
  }

  /**
   * Whether a replica of a release before shards holds the unsharded lock; if so, every shard held
   * here is handed over and none is competed for. When that cannot be told (the Lease cannot be
   * read, say), the balance goes on as if none did, with a warning: the check guards against a
   * wrong rollout, and must not keep a healthy deployment from owning anything.
   */
  private boolean olderReleaseHolds(int live) {
    Optional<String> older;
    try {
      older = olderRelease.holder();
      if (olderReleaseError != null) {
        olderReleaseError = null;
        LOG.info("Whether an older release holds the unsharded lock can be told again");
      }
    } catch (RuntimeException e) {
      String message = String.valueOf(e.getMessage());
      if (!message.equals(olderReleaseError)) {
        olderReleaseError = message;
        LOG.warnf(
            "Could not tell whether a replica of a release before shards holds the unsharded lock;"
                + " balancing as if none did: %s",
            message);
      }
      older = Optional.empty();
    }
    if (older.isEmpty()) {
      if (loggedOlder != null) {
        LOG.infof(
            "%s (a release before shards) no longer holds the lock; balancing the shards",
            loggedOlder);
        loggedOlder = null;
      }
      return false;
    }
    if (!older.get().equals(loggedOlder)) {
      loggedOlder = older.get();
      LOG.warnf(
          "%s runs a release before shards and holds the unsharded lock: it works every kind's"
              + " jobs whatever their shard, so this replica holds no shard until it lets go. Roll"
              + " every replica out to this release with jobs.lock.sharding=none first, then"
              + " change the mapping",
          older.get());
    }
    for (Map.Entry<String, OwnerLock> e : locks.all().entrySet()) {
      OwnerLock lock = e.getValue();
      lock.compete(false);
      if (lock.trust() != Trust.NONE) {
        giveUp(e.getKey(), lock, live, 0);
      }
    }
    return true;
  }

  /** Hands one shard over; returns whether its lock was given up. */
  private boolean giveUp(String key, OwnerLock lock, int live, int target) {
    lock.compete(false);
    int released = handOver.handOver(key, lock::relinquish);
    if (lock.trust() != Trust.NONE) {
      return false; // kept: a job's thread still runs (see ServiceManager.handOverShard)
    }
    announce.run();
    LOG.infof(
        "Handed shard %s over to balance %d replica(s) (this one's share: %d); %d job(s) went"
            + " back to pending",
        key, live, target, released);
    return true;
  }

  private static Instant since(OwnerLock lock) {
    Instant since = lock.status().since();
    return since == null ? Instant.EPOCH : since;
  }
}
