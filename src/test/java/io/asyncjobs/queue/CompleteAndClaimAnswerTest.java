package io.asyncjobs.queue;

import static org.assertj.core.api.Assertions.assertThat;

import io.agroal.api.AgroalDataSource;
import io.asyncjobs.config.Shards;
import io.asyncjobs.lock.OwnerLock;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.Intercepted;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.sql.Array;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The wake-up's statement, which writes a batch of outcomes and claims the next batch, answers with
 * the written uids once. It once repeated them on every claimed row, so that its answer grew with
 * the square of the batch: 11 MB for 510 outcomes and 510 claims, three quarters of its time.
 */
@QuarkusTest
class CompleteAndClaimAnswerTest {

  private static final String KIND = "answer_test";

  @Inject AgroalDataSource dataSource;
  @Inject OwnerLock lock;
  @Inject JobQueue queue;
  @Inject Database db;

  @AfterEach
  void tearDown() {
    db.update("DELETE FROM jobs WHERE kind = ?", KIND);
  }

  @Test
  void shouldAnswerWithTheWrittenUidsOnceWhateverTheNumberClaimed() {
    List<EnqueueRequest> jobs = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      jobs.add(EnqueueRequest.of(KIND, new Owner("user", "answers"), Map.of("i", i)));
    }
    queue.enqueue(jobs);
    AtomicInteger rowsWithUids = new AtomicInteger();
    AtomicInteger rows = new AtomicInteger();
    JobClaims store = new JobClaims(counting(dataSource, rows, rowsWithUids));
    Instant now = Instant.now();
    long epoch = lock.epoch();
    List<Job> first =
        store.claimMany(new JobClaims.ClaimRequest(KIND, Shards.ALL, 100, epoch, now, null)).jobs();
    List<Completion> outcomes = new ArrayList<>();
    for (Job job : first) {
      outcomes.add(Completion.done(job.uid, Map.of("ok", true), now, now.plusMillis(1)));
    }
    rows.set(0);
    rowsWithUids.set(0);

    JobClaims.CompleteAndClaim both =
        store.completeAndClaimMany(
            outcomes,
            Duration.ofDays(1),
            new JobClaims.ClaimRequest(
                KIND,
                Shards.ALL,
                150,
                epoch,
                now,
                new JobClaims.ClaimCursor(0, first.get(first.size() - 1).uid)));

    assertThat(both.written())
        .hasSize(100)
        .containsOnlyKeys(first.stream().map(j -> j.uid).toList());
    assertThat(both.claimed()).hasSize(150);
    assertThat(rows.get()).as("rows of the answer").isEqualTo(150);
    assertThat(rowsWithUids.get()).as("rows that carry the written uids").isEqualTo(1);
  }

  /** A data source whose result sets count their rows and the rows with a second column. */
  private static AgroalDataSource counting(
      AgroalDataSource real, AtomicInteger rows, AtomicInteger rowsWithUids) {
    return Intercepted.statements(
        real,
        (sql, ps) ->
            Intercepted.wrap(
                PreparedStatement.class,
                ps,
                (m3, a3, r3) ->
                    r3 instanceof ResultSet rs
                        ? Intercepted.wrap(
                            ResultSet.class,
                            rs,
                            (m4, a4, r4) -> {
                              if (m4.getName().equals("next") && Boolean.TRUE.equals(r4)) {
                                rows.incrementAndGet();
                              }
                              if (m4.getName().equals("getArray")
                                  && Integer.valueOf(2).equals(a4[0])
                                  && r4 instanceof Array) {
                                rowsWithUids.incrementAndGet();
                              }
                              return r4;
                            })
                        : r3));
  }
}
