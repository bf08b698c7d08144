package io.asyncjobs.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.TestClock;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The read side: one job, touch, and the list's filters and pages. */
@QuarkusTest
class JobReadsTest {

  private static final Instant T0 = Instant.parse("2026-03-01T10:00:00Z");
  private static final Owner ALICE = new Owner("user", "alice");
  private static final Owner BOB = new Owner("user", "bob");

  @Inject JobReads reads;
  @Inject JobQueue queue;
  @Inject TestClock clock;
  @Inject Database db;

  @BeforeEach
  void setUp() {
    db.clearJobs();
    clock.set(T0);
  }

  @AfterEach
  void tearDown() {
    clock.reset();
  }

  @Test
  void shouldReturnEmptyForAnUnknownJob() {
    assertThat(reads.getJob(UUID.randomUUID())).isEmpty();
  }

  @Test
  void shouldExtendExpiryAndRecordAccessWhenTouched() {
    UUID uid = queue.enqueue("zip", Map.of(), null, null, null);
    clock.advance(Duration.ofDays(6));

    assertThat(reads.touchJob(uid, Duration.ofDays(7).toSeconds())).isTrue();

    Job job = reads.getJob(uid).orElseThrow();
    assertThat(job.lastAccessedAt).isEqualTo(T0.plus(Duration.ofDays(6)));
    assertThat(job.expiresAt).isEqualTo(T0.plus(Duration.ofDays(13)));
  }

  @Test
  void shouldNeverShortenExpiryWhenTouched() {
    UUID uid = queue.enqueue("zip", Map.of(), null, null, null);
    clock.advance(Duration.ofHours(1));

    assertThat(reads.touchJob(uid, 60)).isTrue();

    Job job = reads.getJob(uid).orElseThrow();
    assertThat(job.expiresAt).isEqualTo(T0.plus(Duration.ofDays(7)));
    assertThat(job.lastAccessedAt).isEqualTo(T0.plus(Duration.ofHours(1)));
  }

  @Test
  void shouldReportTouchOfAnUnknownJob() {
    assertThat(reads.touchJob(UUID.randomUUID(), 60)).isFalse();
  }

  @Test
  void shouldFilterListsByKindStatusAndOwnerNewestFirst() {
    UUID a1 = queue.enqueue("zip", Map.of(), "user", "alice", null);
    UUID b1 = queue.enqueue("zip", Map.of(), "user", "bob", null);
    UUID a2 = queue.enqueue("fork", Map.of(), "user", "alice", null);
    UUID a3 = queue.enqueue("zip", Map.of(), "user", "alice", null);
    db.update("UPDATE jobs SET status = 'done' WHERE uid = ?", a3);

    assertThat(uids(reads.listJobs(null, null, null, null, 50))).containsExactly(a3, a2, b1, a1);
    assertThat(uids(reads.listJobs("zip", null, null, null, 50))).containsExactly(a3, b1, a1);
    assertThat(uids(reads.listJobs(null, JobStatus.PENDING, null, null, 50)))
        .containsExactly(a2, b1, a1);
    assertThat(uids(reads.listJobs(null, null, ALICE, null, 50))).containsExactly(a3, a2, a1);
    assertThat(uids(reads.listJobs("zip", JobStatus.PENDING, ALICE, null, 50))).containsExactly(a1);
    assertThat(uids(reads.listJobs(null, null, BOB, null, 50))).containsExactly(b1);
    assertThat(uids(reads.listJobs(null, null, new Owner("service", "alice"), null, 50))).isEmpty();
  }

  @Test
  void shouldPageThroughEveryJobExactlyOnce() {
    List<UUID> enqueued = new ArrayList<>();
    for (int i = 0; i < 25; i++) {
      enqueued.add(queue.enqueue("zip", Map.of("i", i), "user", "alice", null));
    }

    List<UUID> seen = new ArrayList<>();
    UUID cursor = null;
    int pages = 0;
    do {
      JobPage page = reads.listJobs(null, null, ALICE, cursor, 10);
      seen.addAll(uids(page));
      cursor = page.next();
      pages++;
    } while (cursor != null);

    Collections.reverse(enqueued);
    assertThat(seen).containsExactlyElementsOf(enqueued);
    assertThat(pages).isEqualTo(3);
  }

  @Test
  void shouldEndOnAFullLastPageWithoutACursor() {
    for (int i = 0; i < 10; i++) {
      queue.enqueue("zip", Map.of(), null, null, null);
    }
    assertThat(reads.listJobs(null, null, null, null, 10).next()).isNull();
  }

  @Test
  void shouldRejectAPageSizeOutOfRange() {
    assertThatThrownBy(() -> reads.listJobs(null, null, null, null, 0))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> reads.listJobs(null, null, null, null, JobReads.MAX_PAGE_SIZE + 1))
        .isInstanceOf(IllegalArgumentException.class);
  }

  private static List<UUID> uids(JobPage page) {
    return page.jobs().stream().map(j -> j.uid).toList();
  }
}
