package io.asyncjobs.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.config.ServiceSettings;
import io.asyncjobs.config.Shards;
import io.asyncjobs.queue.JobClaims;
import io.asyncjobs.queue.JobOutcomes;
import io.asyncjobs.queue.JobRecovery;
import io.asyncjobs.queue.JobSweep;
import io.asyncjobs.settings.SettingsOverride;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The refill step on its own: it claims no more jobs than the threads have room for, starts a task
 * for each one, says how many it claimed, and claims none while the shard drains.
 */
@QuarkusTest
class RefillerTest extends ControlledKindFixture {

  @Inject JobClaims claims;
  @Inject JobOutcomes outcomes;
  @Inject JobRecovery recovery;
  @Inject JobSweep sweep;

  private final WorkerPool pool = new WorkerPool("refiller-test", 1);

  @AfterEach
  void stopPool() {
    pool.shutdownNow();
  }

  @Test
  void shouldClaimAsManyAsThereIsRoomForStartThemAndSayHowMany() throws Exception {
    settings.update("controlled", new SettingsOverride(null, 2, null, null));
    UUID first = enqueue(Map.of());
    UUID second = enqueue(Map.of());
    UUID third = enqueue(Map.of());
    ShardState state = state();
    Tally tally = new Tally();

    int claimed = refiller(state).runOnce(settings(), epoch(), T0, tally);

    assertThat(claimed).isEqualTo(2);
    assertThat(tally.claimed).isEqualTo(2);
    assertThat(state.inFlight.keySet()).containsExactlyInAnyOrder(first, second);
    assertThat(status(third)).isEqualTo("pending");
    assertThat(service.nextStarted()).isIn(first, second);
  }

  @Test
  void shouldClaimNothingWhileTheShardDrains() {
    UUID uid = enqueue(Map.of());
    ShardState state = state();
    state.draining = true;
    Tally tally = new Tally();

    int claimed = refiller(state).runOnce(settings(), epoch(), T0, tally);

    assertThat(claimed).isZero();
    assertThat(state.inFlight).isEmpty();
    assertThat(status(uid)).isEqualTo("pending");
  }

  private ServiceSettings settings() {
    return settings.effective("controlled");
  }

  private long epoch() {
    return service.ownerLock().epoch();
  }

  private String status(UUID uid) {
    return (String) db.query("SELECT status FROM jobs WHERE uid = ?", uid).get(0).get("status");
  }

  private ShardState state() {
    return new ShardState("controlled", Shards.ALL, service.ownerLock(), JobTraces.OFF);
  }

  private Refiller refiller(ShardState state) {
    EngineContext context = RolesContext.of(claims, outcomes, recovery, sweep, settings, clock);
    return new Refiller(service, context, state, new Outcomes("controlled", context), pool);
  }
}
