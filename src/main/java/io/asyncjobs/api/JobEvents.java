package io.asyncjobs.api;

import io.asyncjobs.auth.DownloadLinks;
import io.asyncjobs.config.JobsConfig;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobQueue;
import io.asyncjobs.queue.JobStatus;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.sse.OutboundSseEvent;
import jakarta.ws.rs.sse.Sse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.jboss.logging.Logger;

/**
 * The event stream of one job. It reads the job's row every {@code jobs.api.events-poll-interval}
 * (a primary-key read on any replica, no owner involved) and sends a {@code job} event when what a
 * caller sees has changed; it ends after the event that shows the job finished.
 */
@ApplicationScoped
public class JobEvents {

  private static final Logger LOG = Logger.getLogger(JobEvents.class);

  private final JobQueue queue;
  private final DownloadLinks links;
  private final JobsConfig config;

  JobEvents(JobQueue queue, DownloadLinks links, JobsConfig config) {
    this.queue = queue;
    this.links = links;
    this.config = config;
  }

  /** The stream; the caller has checked that the job exists and is visible. */
  Multi<OutboundSseEvent> stream(UUID uid, Sse sse) {
    Watch watch = new Watch(uid, sse, config.api().eventsHeartbeat().toNanos());
    Duration every = config.api().eventsPollInterval();
    return Multi.createFrom()
        .ticks()
        .startingAfter(Duration.ofMillis(1))
        .every(every)
        .onOverflow()
        .drop()
        // Ticks arrive on the event loop; the database read blocks, so it runs on a worker.
        .emitOn(Infrastructure.getDefaultWorkerPool())
        .onItem()
        .transformToIterable(tick -> watch.next())
        .select()
        .first(step -> !step.end())
        .select()
        .first(config.api().eventsMaxDuration())
        .map(Step::event);
  }

  /** What one poll produced: an event to send, or the end of the stream. */
  private record Step(OutboundSseEvent event, boolean end) {}

  /** What a caller sees change; the stream sends an event when it differs from the last one. */
  private record Seen(
      JobStatus status, boolean cancelRequested, Double progress, Long items, Instant updatedAt) {

    static Seen of(Job job) {
      return new Seen(
          job.status, job.cancelRequested, job.progress, job.progressItems, job.updatedAt);
    }
  }

  /** The state of one stream; polls never overlap (ticks are dropped while one runs). */
  private final class Watch {
    private final UUID uid;
    private final Sse sse;
    private final long heartbeatNanos;
    private Seen last;
    private long lastSentNanos = System.nanoTime();

    Watch(UUID uid, Sse sse, long heartbeatNanos) {
      this.uid = uid;
      this.sse = sse;
      this.heartbeatNanos = heartbeatNanos;
    }

    List<Step> next() {
      Optional<Job> found;
      try {
        found = queue.getJob(uid);
      } catch (RuntimeException e) {
        // A database hiccup costs one poll, not the stream.
        LOG.debugf(e, "Event stream of %s skipped a poll", uid);
        return heartbeatIfDue();
      }
      if (found.isEmpty()) {
        return List.of(new Step(null, true));
      }
      Job job = found.get();
      Seen seen = Seen.of(job);
      if (Objects.equals(seen, last)) {
        return heartbeatIfDue();
      }
      last = seen;
      lastSentNanos = System.nanoTime();
      OutboundSseEvent event =
          sse.newEventBuilder()
              .name("job")
              .id(String.valueOf(job.updatedAt.toEpochMilli()))
              .mediaType(MediaType.APPLICATION_JSON_TYPE)
              .data(JobView.class, JobView.of(job, links))
              .build();
      boolean finished = job.status == JobStatus.DONE || job.status == JobStatus.FAILED;
      return finished
          ? List.of(new Step(event, false), new Step(null, true))
          : List.of(new Step(event, false));
    }

    private List<Step> heartbeatIfDue() {
      if (System.nanoTime() - lastSentNanos < heartbeatNanos) {
        return List.of();
      }
      lastSentNanos = System.nanoTime();
      return List.of(new Step(sse.newEventBuilder().comment("keep-alive").build(), false));
    }
  }
}
