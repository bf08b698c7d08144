package io.asyncjobs.config;

import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;

/**
 * The mapping of jobs onto shards that ownership is split into (docs/design/shards.md). Every job
 * row carries its shard, fixed at enqueue; an owner acts on the rows of the shards it holds the
 * lock of. A shard's key is what the row stores; its lock is named after the key.
 *
 * @param mode {@code none}: one shard {@link #ALL} for every kind; {@code per-kind}: each kind its
 *     own
 * @param shardsPerKind kinds hashed over more than one shard, by kind; absent kinds have one
 */
public record Shards(Mode mode, Map<String, Integer> shardsPerKind) {

  /**
   * The one shard of the unsharded default: every kind's jobs, under the lock {@code
   * jobs.lock.name}. Rows from before shards belong to it.
   */
  public static final String ALL = "all";

  /** The most shards one kind may be hashed over. */
  public static final int MAX_SHARDS_PER_KIND = 64;

  /** The unsharded default: today's one owner for every kind. */
  public static final Shards NONE = new Shards(Mode.NONE, Map.of());

  /** How kinds share locks when they are not hashed over several shards. */
  public enum Mode {
    /** Every kind in the one shard {@link #ALL}. */
    NONE,
    /** Each kind in a shard of its own, named after the kind. */
    PER_KIND
  }

  public Shards {
    shardsPerKind = Map.copyOf(shardsPerKind);
    shardsPerKind.forEach(
        (kind, n) -> {
          if (n < 1 || n > MAX_SHARDS_PER_KIND) {
            throw new IllegalArgumentException(
                "jobs.services."
                    + kind
                    + ".shards must be between 1 and "
                    + MAX_SHARDS_PER_KIND
                    + ", was "
                    + n);
          }
        });
  }

  /** The mapping the configuration asks for: {@code jobs.lock.sharding} and each kind's shards. */
  public static Shards of(JobsConfig config) {
    Map<String, Integer> counts = new java.util.TreeMap<>();
    config
        .services()
        .forEach((kind, overrides) -> overrides.shards().ifPresent(n -> counts.put(kind, n)));
    return new Shards(config.lock().sharding(), counts);
  }

  /** Whether every kind is in the one shard {@link #ALL}: the unsharded default. */
  public boolean isUnsharded() {
    return mode == Mode.NONE && shardsPerKind.values().stream().allMatch(n -> n == 1);
  }

  /** How many shards {@code kind}'s jobs are hashed over. */
  public int countOf(String kind) {
    return shardsPerKind.getOrDefault(kind, 1);
  }

  /** The keys of {@code kind}'s shards, in order. */
  public List<String> keysOf(String kind) {
    int n = countOf(kind);
    if (n > 1) {
      return IntStream.range(0, n).mapToObj(i -> kind + "-" + i).toList();
    }
    return List.of(unhashedKey(kind));
  }

  /** The one shard of a kind that is not hashed: {@link #ALL}, or the kind per kind. */
  private String unhashedKey(String kind) {
    return mode == Mode.NONE ? ALL : kind;
  }

  /**
   * The shard a new job of {@code kind} with {@code uid} belongs to. Job ids begin with their time,
   * so the hash mixes all of their bits; a caller's burst spreads over the kind's shards.
   */
  public String shardOf(String kind, UUID uid) {
    int n = countOf(kind);
    if (n == 1) {
      return unhashedKey(kind);
    }
    long h = uid.getMostSignificantBits() * 0x9E3779B97F4A7C15L ^ uid.getLeastSignificantBits();
    h ^= h >>> 33;
    h *= 0xFF51AFD7ED558CCDL;
    h ^= h >>> 33;
    return kind + "-" + Math.floorMod(h, n);
  }

  /**
   * The name of the lock of shard {@code key}: {@code base} itself for {@link #ALL} (the Lease and
   * advisory lock of the unsharded default), else {@code base-key} with {@code _} as {@code -}, as
   * a Lease's name allows.
   */
  public static String lockName(String base, String key) {
    return ALL.equals(key) ? base : base + "-" + key.replace('_', '-');
  }
}
