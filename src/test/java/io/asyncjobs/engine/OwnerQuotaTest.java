package io.asyncjobs.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.queue.EnqueueRequest;
import io.asyncjobs.queue.Enqueued;
import io.asyncjobs.queue.JobQueue;
import io.asyncjobs.queue.Owner;
import io.asyncjobs.settings.SettingsOverride;
import io.quarkus.test.junit.QuarkusTest;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * {@code max-running-per-owner}: an owner at its running quota gets no more jobs started until one
 * of its jobs ends, while the other owners' jobs take the room, in either claim order.
 */
@QuarkusTest
class OwnerQuotaTest extends ControlledKindFixture {

  private static final Map<String, Object> BLOCK = Map.of("block", true);

  @Test
  void shouldRunNoMoreOfOneOwnersJobsAtOnceThanItsQuota() throws Exception {
    for (String order : List.of("fifo", "fair")) {
      service.reset();
      db.clearJobs();
      settings.update("controlled", new SettingsOverride(null, 4, null, null, order, null, 2));
      List<UUID> alices = enqueueMany("alice", 6);
      List<UUID> bobs = enqueueMany("bob", 2);

      // fifo may take two claims: alice's jobs fill the head of the first.
      service.runOnce();
      service.runOnce();
      Set<UUID> started = new HashSet<>();
      for (int i = 0; i < 4; i++) {
        started.add(service.nextStarted());
      }
      service.runOnce();

      assertThat(started)
          .as(order)
          .containsExactlyInAnyOrder(alices.get(0), alices.get(1), bobs.get(0), bobs.get(1));
      assertThat(service.started).as(order + ": nothing more started").isEmpty();
      assertThat(runningOf("alice")).as(order).isEqualTo(2);

      // One of alice's ends: her next one takes its place, and only one.
      service.release(alices.get(0));
      service.awaitReturned(alices.get(0));
      service.runOnce();
      assertThat(service.nextStarted()).as(order).isEqualTo(alices.get(2));
      service.runOnce();
      assertThat(service.started).as(order).isEmpty();
      assertThat(runningOf("alice")).as(order).isEqualTo(2);
    }
  }

  /**
   * While one owner is at its running quota its due jobs wait, and the threads that could run
   * another owner's job sit idle: that owner's new job must wake the processing replica (the
   * enqueue's NOTIFY, which a replica that does not own the kind relies on), whichever way it is
   * enqueued. A job of the owner at its quota would wait anyway, and without a quota a waiting due
   * job still means a busy owner: neither sends one.
   */
  @Test
  void shouldWakeForAnotherOwnersJobWhileOneOwnerWaitsAtItsRunningQuota() throws Exception {
    settings.update("controlled", new SettingsOverride(null, 4, null, null, null, null, 1));
    enqueueMany("alice", 2);
    service.runOnce();
    service.nextStarted(); // alice's first; her second waits at her quota, three threads idle

    try (Connection c = db.dataSource().getConnection();
        Statement s = c.createStatement()) {
      s.execute("LISTEN " + JobQueue.ENQUEUED_CHANNEL);
      queue.enqueue("controlled", BLOCK, "user", "bob", null);
      enqueueMany("carol", 2);
      queue.enqueueIdempotent("controlled", BLOCK, "user", "dave", null, "k1");
      // A keyed list of two takes JobInsertBatch (a list of one, JobInsertIdempotent).
      EnqueueRequest erin = EnqueueRequest.of("controlled", new Owner("user", "erin"), BLOCK);
      queue.enqueue(List.of(erin.withIdempotencyKey("k2"), erin));
      queue.enqueue("controlled", BLOCK, "user", "alice", null);
      assertThat(wakeUps(c, s)).as("with a running quota").hasSize(4);

      settings.update("controlled", SettingsOverride.NONE);
      queue.enqueue("controlled", BLOCK, "user", "frank", null);
      assertThat(wakeUps(c, s)).as("without a running quota, the queue is busy").isEmpty();
      s.execute("UNLISTEN *");
    }
  }

  /** The wake-ups sent since the last call, up to a marker this sends now. */
  private static List<String> wakeUps(Connection c, Statement s) throws SQLException {
    s.execute("NOTIFY " + JobQueue.ENQUEUED_CHANNEL + ", 'end'");
    List<String> payloads = new ArrayList<>();
    while (true) {
      PGNotification[] notes = c.unwrap(PGConnection.class).getNotifications(5_000);
      if (notes == null || notes.length == 0) {
        throw new AssertionError("the marker never came back; got " + payloads);
      }
      for (PGNotification note : notes) {
        if (note.getParameter().equals("end")) {
          return payloads;
        }
        payloads.add(note.getParameter());
      }
    }
  }

  private long runningOf(String owner) {
    return ((Number)
            db.query(
                    "SELECT count(*) AS n FROM jobs WHERE kind = 'controlled' AND owner_id = ?"
                        + " AND status = 'running'",
                    owner)
                .get(0)
                .get("n"))
        .longValue();
  }

  private List<UUID> enqueueMany(String owner, int n) {
    List<EnqueueRequest> jobs = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      jobs.add(EnqueueRequest.of("controlled", new Owner("user", owner), BLOCK));
    }
    return queue.enqueue(jobs).stream().map(Enqueued::uid).toList();
  }
}
