package io.asyncjobs.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.asyncjobs.queue.JobIds;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class ShardsTest {

  @Test
  void shouldPutEveryKindInTheOneShardAndLockByDefault() {
    UUID uid = UUID.randomUUID();

    assertThat(Shards.NONE.keysOf("zip")).containsExactly(Shards.ALL);
    assertThat(Shards.NONE.shardOf("seo_meta", uid)).isEqualTo(Shards.ALL);
    assertThat(Shards.lockName("async-jobs-owner", Shards.ALL)).isEqualTo("async-jobs-owner");
  }

  @Test
  void shouldGiveEachKindItsOwnShardPerKindWithALeaseNameForIt() {
    Shards perKind = new Shards(Shards.Mode.PER_KIND, Map.of());

    assertThat(perKind.keysOf("seo_meta")).containsExactly("seo_meta");
    assertThat(perKind.shardOf("seo_meta", UUID.randomUUID())).isEqualTo("seo_meta");
    assertThat(Shards.lockName("async-jobs-owner", "seo_meta"))
        .isEqualTo("async-jobs-owner-seo-meta");
  }

  @Test
  void shouldHashAKindsJobsEvenlyOverItsShardsWhateverTheMode() {
    for (Shards.Mode mode : Shards.Mode.values()) {
      Shards shards = new Shards(mode, Map.of("zip", 4));
      assertThat(shards.keysOf("zip")).containsExactly("zip-0", "zip-1", "zip-2", "zip-3");
      assertThat(shards.keysOf("fork"))
          .containsExactly(mode == Shards.Mode.NONE ? Shards.ALL : "fork");

      // Job ids as the queue makes them, one burst: they share their leading time bits.
      Map<String, Integer> counts = new HashMap<>();
      for (int i = 0; i < 40_000; i++) {
        counts.merge(shards.shardOf("zip", JobIds.next()), 1, Integer::sum);
      }
      assertThat(counts).containsOnlyKeys(shards.keysOf("zip"));
      assertThat(counts.values()).allSatisfy(n -> assertThat(n).isBetween(9_400, 10_600));
    }
  }

  @Test
  void shouldPutAHashedJobInTheSameShardWhicheverModeTheOtherKindsUse() {
    // A change between none and per-kind leaves a hashed kind's jobs where they were.
    Shards none = new Shards(Shards.Mode.NONE, Map.of("deepsearch", 3));
    Shards perKind = new Shards(Shards.Mode.PER_KIND, Map.of("deepsearch", 3));

    for (int i = 0; i < 1_000; i++) {
      UUID uid = JobIds.next();
      assertThat(perKind.shardOf("deepsearch", uid)).isEqualTo(none.shardOf("deepsearch", uid));
    }
  }

  @Test
  void shouldRefuseAShardCountOutsideItsRange() {
    assertThatThrownBy(() -> new Shards(Shards.Mode.PER_KIND, Map.of("zip", 0)))
        .hasMessage("jobs.services.zip.shards must be between 1 and 64, was 0");
    assertThatThrownBy(() -> new Shards(Shards.Mode.PER_KIND, Map.of("zip", 65)))
        .hasMessageContaining("was 65");
  }
}
