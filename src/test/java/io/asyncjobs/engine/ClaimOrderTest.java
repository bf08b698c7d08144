package io.asyncjobs.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.queue.EnqueueRequest;
import io.asyncjobs.queue.Enqueued;
import io.asyncjobs.queue.Owner;
import io.asyncjobs.settings.SettingsOverride;
import io.quarkus.test.junit.QuarkusTest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Which due job goes next: priority first (higher first), then with the {@code fair} claim order
 * turns between owners, then enqueue order. A kind's claim order is a run-time setting; {@code
 * fifo}, the default, keeps uid order as the spec says.
 */
@QuarkusTest
class ClaimOrderTest extends ControlledKindFixture {

  private static final Map<String, Object> BLOCK = Map.of("block", true);

  @Test
  void shouldStartAnotherOwnersFirstJobWithinOneClaimWhenFair() throws Exception {
    order("fair", 2);
    List<UUID> alices = enqueueMany("alice", 1000);
    UUID bobs = queue.enqueue("controlled", BLOCK, "user", "bob", null);

    service.runOnce();

    List<UUID> first = List.of(service.nextStarted(), service.nextStarted());
    assertThat(first).as("the first claim of max-concurrent (2) jobs").contains(bobs);
    assertThat(first).contains(alices.get(0));
  }

  @Test
  void shouldKeepEnqueueOrderWhenFifo() throws Exception {
    order("fifo", 2);
    List<UUID> alices = enqueueMany("alice", 1000);
    UUID bobs = queue.enqueue("controlled", BLOCK, "user", "bob", null);

    List<UUID> started = new ArrayList<>();
    for (int round = 0; round < 3; round++) {
      service.runOnce();
      UUID a = service.nextStarted();
      UUID b = service.nextStarted();
      started.add(a);
      started.add(b);
      service.release(a);
      service.release(b);
      service.awaitReturned(a);
      service.awaitReturned(b);
    }

    assertThat(started).doesNotContain(bobs);
    assertThat(started).containsExactlyInAnyOrderElementsOf(alices.subList(0, 6));
  }

  @Test
  void shouldTakeTurnsBetweenOwnersOneJobAtATime() throws Exception {
    order("fair", 1);
    Map<UUID, String> ownerOf = new HashMap<>();
    for (String owner : List.of("carol", "alice", "bob")) {
      for (UUID uid : enqueueMany(owner, 3)) {
        ownerOf.put(uid, owner);
      }
    }

    List<String> turns = new ArrayList<>();
    List<UUID> started = new ArrayList<>();
    for (int i = 0; i < 9; i++) {
      service.runOnce();
      UUID uid = service.nextStarted();
      started.add(uid);
      turns.add(ownerOf.get(uid));
      service.release(uid);
      service.awaitReturned(uid);
    }

    // Each round of three serves every owner once, in the same rotation (where the rotation
    // starts depends on where the kind's last claim in turns stopped).
    for (int round = 0; round < 3; round++) {
      assertThat(turns.subList(3 * round, 3 * round + 3))
          .as("round %d of %s", round, turns)
          .containsExactlyInAnyOrder("alice", "bob", "carol");
    }
    assertThat(turns.subList(3, 9))
        .isEqualTo(
            List.of(turns.subList(0, 3), turns.subList(0, 3)).stream()
                .flatMap(List::stream)
                .toList());
    // Within one owner, enqueue order.
    for (String owner : List.of("alice", "bob", "carol")) {
      List<UUID> own = started.stream().filter(u -> ownerOf.get(u).equals(owner)).toList();
      List<UUID> sorted = new ArrayList<>(own);
      Collections.sort(sorted, (x, y) -> x.toString().compareTo(y.toString()));
      assertThat(own).as(owner).containsExactlyElementsOf(sorted);
    }
  }

  @Test
  void shouldClaimHigherPrioritiesFirstInEitherOrder() throws Exception {
    for (String order : List.of("fifo", "fair")) {
      service.reset();
      db.clearJobs();
      order(order, 1);
      UUID low = queue.enqueue("controlled", BLOCK, "user", "alice", null, -5);
      UUID normal = queue.enqueue("controlled", BLOCK, "user", "bob", null);
      UUID high = queue.enqueue("controlled", BLOCK, "user", "alice", null, 5);
      UUID higher = queue.enqueue("controlled", BLOCK, "user", "carol", null, 9);

      List<UUID> started = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        service.runOnce();
        UUID uid = service.nextStarted();
        started.add(uid);
        service.release(uid);
        service.awaitReturned(uid);
      }

      assertThat(started).as(order).containsExactly(higher, high, normal, low);
      assertThat(queue.getJob(high).orElseThrow().priority).isEqualTo(5);
    }
  }

  @Test
  void shouldChangeTheOrderAtRunTime() throws Exception {
    order("fifo", 1);
    List<UUID> alices = enqueueMany("alice", 3);
    UUID bobs = queue.enqueue("controlled", BLOCK, "user", "bob", null);
    service.runOnce();
    UUID first = service.nextStarted();
    assertThat(first).isEqualTo(alices.get(0));
    service.release(first);
    service.awaitReturned(first);

    order("fair", 2); // read by the next tick
    service.runOnce();

    assertThat(List.of(service.nextStarted(), service.nextStarted()))
        .containsExactlyInAnyOrder(alices.get(1), bobs);
  }

  private void order(String claimOrder, int maxConcurrent) {
    settings.update(
        "controlled", new SettingsOverride(null, maxConcurrent, null, null, claimOrder));
  }

  private List<UUID> enqueueMany(String owner, int n) {
    List<EnqueueRequest> jobs = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      jobs.add(EnqueueRequest.of("controlled", new Owner("user", owner), BLOCK));
    }
    return queue.enqueue(jobs).stream().map(Enqueued::uid).toList();
  }
}
