package io.asyncjobs.lock;

import io.asyncjobs.config.Shards;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Every owner lock of this replica, one per shard it competes for, each with its own holding and
 * fencing epochs. The lock of {@link Shards#ALL} is the one lock of the unsharded default ({@code
 * jobs.lock.name}); others are named by {@link Shards#lockName} and created, and start competing,
 * the first time a shard's runner asks for them.
 */
public final class OwnerLocks {

  private final String identity;
  private final Function<String, OwnerLock> factory;
  private final Map<String, OwnerLock> byShard = new LinkedHashMap<>();
  private boolean released;

  /**
   * @param identity this replica's name
   * @param factory builds and starts the lock of a shard key
   */
  public OwnerLocks(String identity, Function<String, OwnerLock> factory) {
    this.identity = identity;
    this.factory = factory;
  }

  /** A registry of one lock, for tests and for the CLI: every shard gets {@code lock}. */
  public static OwnerLocks of(OwnerLock lock) {
    return new OwnerLocks(lock.identity(), key -> lock);
  }

  /** The lock of the shard {@link Shards#ALL}. */
  public OwnerLock primary() {
    return forShard(Shards.ALL);
  }

  /**
   * The lock of shard {@code key}, created (and competing) on first use.
   *
   * @throws IllegalStateException once {@link #releaseAll()} ran
   */
  public synchronized OwnerLock forShard(String key) {
    OwnerLock lock = byShard.get(key);
    if (lock == null) {
      if (released) {
        throw new IllegalStateException("the owner locks were released");
      }
      lock = factory.apply(key);
      byShard.put(key, lock);
    }
    return lock;
  }

  /**
   * Gives up and forgets the lock of a shard no runner needs any more (a retired shard that has no
   * jobs left); a later {@link #forShard} creates it again.
   */
  public void retire(String key) {
    OwnerLock lock;
    synchronized (this) {
      lock = byShard.remove(key);
    }
    if (lock != null) {
      lock.release();
    }
  }

  /** The locks created so far, by shard key, in the order they were created. */
  public synchronized Map<String, OwnerLock> all() {
    return Map.copyOf(byShard);
  }

  /** The shard keys of the locks created so far, in the order they were created. */
  public synchronized List<String> shards() {
    return new ArrayList<>(byShard.keySet());
  }

  /** This replica's name. */
  public String identity() {
    return identity;
  }

  /** Gives every lock up; no lock is created after this. */
  public void releaseAll() {
    List<OwnerLock> locks;
    synchronized (this) {
      released = true;
      locks = List.copyOf(byShard.values());
    }
    for (OwnerLock lock : locks) {
      lock.release();
    }
  }
}
