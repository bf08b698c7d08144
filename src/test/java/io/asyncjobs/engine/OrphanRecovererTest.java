package io.asyncjobs.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.config.Shards;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobClaims;
import io.asyncjobs.queue.JobOutcomes;
import io.asyncjobs.queue.JobRecovery;
import io.asyncjobs.queue.JobSweep;
import io.opentelemetry.api.trace.Span;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The recover step on its own: running rows of the shard that no task of the runner holds go back
 * to pending, the step says how many, and the next wake-up is told to claim from the head (the jobs
 * put back may sort before its cursor). Rows the runner's own tasks hold are left alone.
 */
@QuarkusTest
class OrphanRecovererTest extends ControlledKindFixture {

  @Inject JobClaims claims;
  @Inject JobOutcomes outcomes;
  @Inject JobRecovery recovery;
  @Inject JobSweep sweep;

  @Test
  void shouldPutAnOrphanBackSayHowManyAndAskTheNextWakeUpToClaimFromTheHead() {
    UUID orphan = insertRunning(1L);
    ShardState state = state();
    Tally tally = new Tally();

    int recovered = recoverer(state).runOnce(settings.effective("controlled"), epoch(), T0, tally);

    assertThat(recovered).isEqualTo(1);
    assertThat(tally.requeued).isEqualTo(1);
    assertThat(state.rewind).as("the next wake-up claims from the head").isTrue();
    Map<String, Object> row = db.query("SELECT * FROM jobs WHERE uid = ?", orphan).get(0);
    assertThat(row.get("status")).isEqualTo("pending");
    assertThat(row.get("retry_count")).isEqualTo(1);
  }

  @Test
  void shouldLeaveTheRowsItsOwnTasksHold() {
    UUID own = insertRunning(epoch());
    ShardState state = state();
    Job job = queue.getJob(own).orElseThrow();
    state.inFlight.put(own, new Task(job, T0, epoch(), Span.getInvalid()));
    Tally tally = new Tally();

    int recovered = recoverer(state).runOnce(settings.effective("controlled"), epoch(), T0, tally);

    assertThat(recovered).isZero();
    assertThat(state.rewind).isFalse();
    assertThat(db.query("SELECT status FROM jobs WHERE uid = ?", own).get(0).get("status"))
        .isEqualTo("running");
  }

  private long epoch() {
    return service.ownerLock().epoch();
  }

  private ShardState state() {
    return new ShardState("controlled", Shards.ALL, service.ownerLock(), JobTraces.OFF);
  }

  private OrphanRecoverer recoverer(ShardState state) {
    return new OrphanRecoverer(
        RolesContext.of(claims, outcomes, recovery, sweep, settings, clock), state);
  }

  private UUID insertRunning(long epoch) {
    UUID uid = enqueue(Map.of());
    db.update(
        "UPDATE jobs SET status = 'running', retry_count = 0, epoch = ?, started_at = ?"
            + " WHERE uid = ?",
        epoch,
        Timestamp.from(T0.minus(Duration.ofSeconds(30))),
        uid);
    return uid;
  }
}
