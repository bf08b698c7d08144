package io.asyncjobs.engine;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.asyncjobs.callbacks.CallbackDelivery;
import io.asyncjobs.config.Shards;
import io.asyncjobs.lock.OwnerLock;
import io.asyncjobs.lock.Trust;
import io.asyncjobs.queue.EnqueueRequest;
import io.asyncjobs.queue.Enqueued;
import io.asyncjobs.queue.JobQueue;
import io.asyncjobs.queue.Owner;
import io.asyncjobs.settings.SettingsOverride;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * A kind hashed over two shards, each under its own advisory lock and epoch, with a lock per kind
 * for the others: what one replica does with each shard, driven by {@code runOnce}.
 */
@QuarkusTest
@TestProfile(ShardedEngineTest.TwoShards.class)
class ShardedEngineTest extends ControlledKindFixture {

  private static final String SHARD_0 = "controlled-0";
  private static final String SHARD_1 = "controlled-1";
  private static final Owner TESTER = new Owner("user", "tester");

  @Inject CallbackDelivery deliveries;

  /** Per-kind locks, and the controlled kind over two shards. */
  public static class TwoShards implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of(
          "jobs.lock.sharding", "per-kind",
          "jobs.services.controlled.shards", "2");
    }
  }

  @BeforeEach
  void bothShardsOwned() throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
    for (String shard : List.of(SHARD_0, SHARD_1)) {
      OwnerLock lock = service.lockOf(shard).orElseThrow();
      while (!(lock.isOwner() && lock.earlierHoldersSettled()) && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      assertThat(lock.isOwner()).as("this replica owns " + shard).isTrue();
    }
  }

  @Test
  void shouldHaveARunnerAndALockOfItsOwnForEachShard() {
    assertThat(service.shards()).containsExactly(SHARD_0, SHARD_1);
    OwnerLock first = service.lockOf(SHARD_0).orElseThrow();
    OwnerLock second = service.lockOf(SHARD_1).orElseThrow();
    assertThat(first.name()).isEqualTo("async-jobs-owner-controlled-0");
    assertThat(second.name()).isEqualTo("async-jobs-owner-controlled-1");
    assertThat(first.epoch()).isNotEqualTo(second.epoch());
    assertThat(manager.jobService("seo_meta").orElseThrow().lockOf("seo_meta").orElseThrow().name())
        .as("a kind of one shard per kind; a Lease name has no underscore")
        .isEqualTo("async-jobs-owner-seo-meta");
  }

  @Test
  void shouldStampEachJobWithTheShardItsIdHashesTo() {
    Shards shards = new Shards(Shards.Mode.PER_KIND, Map.of("controlled", 2));
    List<UUID> jobs = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      jobs.add(enqueue(Map.of("result", Map.of("i", i))));
    }
    jobs.addAll(
        queue
            .enqueue(
                List.of(
                    EnqueueRequest.of("controlled", TESTER, Map.of("i", 40)),
                    EnqueueRequest.of("controlled", TESTER, Map.of("i", 41))))
            .stream()
            .map(Enqueued::uid)
            .toList());
    Map<String, Integer> perShard = new HashMap<>();
    for (UUID uid : jobs) {
      String stored =
          (String) db.query("SELECT shard FROM jobs WHERE uid = ?", uid).get(0).get("shard");
      assertThat(stored).isEqualTo(shards.shardOf("controlled", uid));
      perShard.merge(stored, 1, Integer::sum);
    }
    assertThat(perShard.keySet()).containsExactlyInAnyOrder(SHARD_0, SHARD_1);
    UUID zip = queue.enqueue("zip", Map.of("paths", List.of("a")), "user", "tester", null);
    assertThat(db.query("SELECT shard FROM jobs WHERE uid = ?", zip).get(0).get("shard"))
        .as("an unhashed kind's shard is the kind, per kind")
        .isEqualTo("zip");
  }

  @Test
  void shouldRunUpToMaxConcurrentPerShardEachUnderItsShardsEpoch() throws Exception {
    settings.update("controlled", new SettingsOverride(null, 2, null, null));
    Map<String, List<UUID>> byShard = new HashMap<>();
    for (int i = 0; i < 12; i++) {
      UUID uid = enqueue(Map.of("block", true));
      byShard.computeIfAbsent(shardOf(uid), s -> new ArrayList<>()).add(uid);
    }
    assertThat(byShard.get(SHARD_0)).hasSizeGreaterThanOrEqualTo(2);
    assertThat(byShard.get(SHARD_1)).hasSizeGreaterThanOrEqualTo(2);

    TickResult first = service.runOnce();

    assertThat(first.claimed()).as("two per shard").isEqualTo(4);
    assertThat(service.runOnce().claimed()).isZero();
    for (String shard : List.of(SHARD_0, SHARD_1)) {
      long epoch = service.lockOf(shard).orElseThrow().epoch();
      List<Map<String, Object>> running =
          db.query(
              "SELECT uid, epoch FROM jobs WHERE status = 'running' AND shard = ? ORDER BY uid",
              shard);
      assertThat(running).hasSize(2);
      assertThat(running).allMatch(row -> ((Number) row.get("epoch")).longValue() == epoch);
      assertThat(running.stream().map(row -> (UUID) row.get("uid")))
          .as("FIFO within the shard: its two oldest")
          .containsExactlyElementsOf(byShard.get(shard).subList(0, 2));
    }
    service.reset();
    service.runOnce();
  }

  @Test
  void shouldInterruptOnlyTheShardWhoseLockCanNoLongerBeTrusted() throws Exception {
    settings.update("controlled", new SettingsOverride(null, 1, null, null));
    Map<String, UUID> oneEach = new HashMap<>();
    while (oneEach.size() < 2) {
      UUID uid = enqueue(Map.of("block", true));
      if (oneEach.putIfAbsent(shardOf(uid), uid) != null) {
        db.update("DELETE FROM jobs WHERE uid = ?", uid);
      }
    }
    assertThat(service.runOnce().claimed()).isEqualTo(2);
    service.nextStarted();
    service.nextStarted();
    OwnerLock real = service.lockOf(SHARD_0).orElseThrow();
    SteerableLock steered = new SteerableLock(real);
    service.attachLock(SHARD_0, steered);
    try {
      steered.trust = Trust.NONE;

      manager.watchTrust();

      service.awaitReturned(oneEach.get(SHARD_0));
      assertThat(service.interrupted).containsExactly(oneEach.get(SHARD_0));
      assertThat(service.inFlightCount()).isEqualTo(2);
      service.supervise(); // the lost shard hands its job back; the other goes on
      assertThat(status(oneEach.get(SHARD_0))).isEqualTo("pending");
      assertThat(status(oneEach.get(SHARD_1))).isEqualTo("running");
      assertThat(service.inFlightCount()).isEqualTo(1);
    } finally {
      service.attachLock(SHARD_0, real);
    }
    service.reset();
    service.runOnce();
  }

  @Test
  void shouldNameTheShardInTheWakeUpNotification() throws Exception {
    try (Connection listener = db.dataSource().getConnection()) {
      try (Statement s = listener.createStatement()) {
        s.execute("LISTEN " + JobQueue.ENQUEUED_CHANNEL);
      }
      try {
        Set<String> expected = new HashSet<>();
        for (int i = 0; i < 6; i++) {
          UUID uid = enqueue(Map.of("result", Map.of("i", i)));
          expected.add("controlled/" + shardOf(uid));
        }
        UUID zip = queue.enqueue("zip", Map.of("paths", List.of("a")), "user", "tester", null);
        expected.add("zip/zip");
        Set<String> payloads = new HashSet<>();
        long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        PGConnection pg = listener.unwrap(PGConnection.class);
        while (!payloads.containsAll(expected) && System.nanoTime() < until) {
          PGNotification[] got = pg.getNotifications(100);
          if (got != null) {
            for (PGNotification n : got) {
              payloads.add(n.getParameter());
            }
          }
        }
        assertThat(payloads)
            .as("one wake-up per shard that was empty, naming it")
            .containsExactlyInAnyOrderElementsOf(expected);
        db.update("DELETE FROM jobs WHERE uid = ?", zip);
      } finally {
        try (Statement s = listener.createStatement()) {
          s.execute("UNLISTEN *");
        }
      }
    }
  }

  @Test
  void shouldWorkTheJobsOfRetiredShardsUnderTheirOwnLocksUntilTheyAreEmpty() throws Exception {
    // A job from before shards (shard 'all') and one from a mapping of eight shards.
    UUID old = enqueue(Map.of("result", Map.of("from", "all")));
    db.update("UPDATE jobs SET shard = 'all' WHERE uid = ?", old);
    UUID wider = enqueue(Map.of("result", Map.of("from", "eight")));
    db.update("UPDATE jobs SET shard = 'controlled-7' WHERE uid = ?", wider);

    manager.followRetiredShards();

    assertThat(service.shards()).containsExactly(SHARD_0, SHARD_1, Shards.ALL, "controlled-7");
    long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
    for (String shard : List.of(Shards.ALL, "controlled-7")) {
      OwnerLock lock = service.lockOf(shard).orElseThrow();
      while (!lock.isOwner() && System.nanoTime() < deadline) {
        Thread.sleep(50); // the balance lets this replica compete for the new shards
      }
      assertThat(lock.isOwner()).as("owner of retired shard " + shard).isTrue();
    }
    assertThat(service.lockOf(Shards.ALL).orElseThrow().name()).isEqualTo("async-jobs-owner");
    assertThat(service.lockOf("controlled-7").orElseThrow().name())
        .isEqualTo("async-jobs-owner-controlled-7");

    assertThat(service.runOnce().claimed()).isEqualTo(2);
    assertThat(service.awaitTasks(Duration.ofSeconds(5))).isTrue();
    assertThat(service.runOnce().done()).isEqualTo(2);
    assertThat(status(old)).isEqualTo("done");
    assertThat(status(wider)).isEqualTo("done");
    assertThat(
            ((Number) db.query("SELECT epoch FROM jobs WHERE uid = ?", wider).get(0).get("epoch"))
                .longValue())
        .as("worked under the retired shard's own epoch")
        .isEqualTo(service.lockOf("controlled-7").orElseThrow().epoch());

    manager.followRetiredShards();

    assertThat(service.shards()).containsExactly(SHARD_0, SHARD_1);
    assertThat(manager.shardGroups().values().stream().flatMap(List::stream))
        .doesNotContain(Shards.ALL, "controlled-7");
  }

  @Test
  void shouldDeliverTheCallbackOfARetiredShardAfterItsRunnerIsGone() throws Exception {
    // The mapping once had eight shards: a job of shard controlled-7 ends with its callback due
    // after a 503. Its shard then holds no pending or running job, so its runner goes; the
    // callback must still be sent by a shard of the current mapping, as the sweep does.
    List<Integer> answers = java.util.Collections.synchronizedList(new ArrayList<>());
    HttpServer receiver =
        HttpServer.create(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0), 0);
    receiver.createContext(
        "/hook",
        exchange -> {
          exchange.getRequestBody().readAllBytes();
          int status = answers.isEmpty() ? 503 : 204;
          answers.add(status);
          exchange.sendResponseHeaders(status, -1);
          exchange.close();
        });
    receiver.start();
    try {
      UUID uid = enqueue(Map.of("result", Map.of("from", "eight")));
      db.update(
          "UPDATE jobs SET shard = 'controlled-7', callback_url = ? WHERE uid = ?",
          "http://127.0.0.1:" + receiver.getAddress().getPort() + "/hook",
          uid);
      manager.followRetiredShards();
      OwnerLock retired = service.lockOf("controlled-7").orElseThrow();
      long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
      while (!retired.isOwner() && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      assertThat(service.runOnce().claimed()).isEqualTo(1);
      assertThat(service.awaitTasks(Duration.ofSeconds(5))).isTrue();
      assertThat(service.runOnce().done()).isEqualTo(1);
      assertThat(deliveries.awaitIdle(Duration.ofSeconds(10))).isTrue();
      assertThat(answers).as("the first delivery, from the retired shard's runner").hasSize(1);

      manager.followRetiredShards();
      assertThat(service.shards())
          .as("no pending or running job left: the retired shard's runner is gone")
          .containsExactly(SHARD_0, SHARD_1);

      clock.set(T0.plus(Duration.ofMinutes(1))); // past the backoff, within the give-up time
      service.runOnce();
      assertThat(deliveries.awaitIdle(Duration.ofSeconds(10))).isTrue();

      assertThat(answers).as("sent again after the runner went").containsExactly(503, 204);
      assertThat(
              db.query("SELECT callback->>'delivered_at' AS at FROM jobs WHERE uid = ?", uid)
                  .get(0)
                  .get("at"))
          .isNotNull();
    } finally {
      receiver.stop(0);
    }
  }

  @Test
  void shouldKeepAShardForBalanceWhileAJobIgnoresItsInterrupt() throws Exception {
    settings.update("controlled", new SettingsOverride(null, 1, null, null));
    UUID stubborn = null;
    while (stubborn == null) {
      UUID uid = enqueue(Map.of("block", true, "ignore_interrupt", true));
      if (shardOf(uid).equals(SHARD_0)) {
        stubborn = uid;
      } else {
        db.update("DELETE FROM jobs WHERE uid = ?", uid);
      }
    }
    assertThat(service.runOnce().claimed()).isEqualTo(1);
    service.nextStarted();
    java.util.concurrent.atomic.AtomicInteger gaveUp =
        new java.util.concurrent.atomic.AtomicInteger();

    manager.handOverShard(SHARD_0, gaveUp::incrementAndGet);

    assertThat(gaveUp).as("the lock stays while the thread runs").hasValue(0);
    assertThat(status(stubborn))
        .as("its row stays running under this replica's epoch: nobody else may start it")
        .isEqualTo("running");

    service.release(stubborn);
    service.awaitReturned(stubborn);
    manager.handOverShard(SHARD_0, gaveUp::incrementAndGet);

    assertThat(gaveUp).hasValue(1);
    assertThat(status(stubborn))
        .as("its outcome, written under this replica's epoch once the thread returned")
        .isEqualTo("done");
  }

  private String shardOf(UUID uid) {
    return (String) db.query("SELECT shard FROM jobs WHERE uid = ?", uid).get(0).get("shard");
  }

  private String status(UUID uid) {
    return (String) db.query("SELECT status FROM jobs WHERE uid = ?", uid).get(0).get("status");
  }
}
