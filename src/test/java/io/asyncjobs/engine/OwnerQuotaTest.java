package io.asyncjobs.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.queue.JobQueue;
import io.asyncjobs.settings.SettingsOverride;
import io.quarkus.test.junit.QuarkusTest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

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
    List<JobQueue.NewJob> jobs = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      jobs.add(new JobQueue.NewJob(BLOCK, null));
    }
    return queue.enqueueMany("controlled", jobs, "user", owner);
  }
}
