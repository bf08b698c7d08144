package io.asyncjobs.api;

import io.asyncjobs.auth.DownloadLinks;
import io.asyncjobs.config.JobsConfig;
import io.asyncjobs.operations.JobView;
import io.asyncjobs.problem.ProblemException;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobStatus;
import io.asyncjobs.queue.Owner;
import io.smallrye.mutiny.Multi;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.sse.OutboundSseEvent;
import jakarta.ws.rs.sse.Sse;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * The event stream of one job. The replica's {@link StreamHub} reads the job's row at once and then
 * every {@code jobs.api.events-poll-interval}, together with every other watched job (no owner
 * involved); the stream sends a {@code job} event when what a caller sees has changed and ends
 * after the event that shows the job finished.
 */
@ApplicationScoped
public class JobEvents {

  private final StreamHub hub;
  private final DownloadLinks links;
  private final JobsConfig config;

  JobEvents(StreamHub hub, DownloadLinks links, JobsConfig config) {
    this.hub = hub;
    this.links = links;
    this.config = config;
  }

  /**
   * The stream; the caller has checked that the job exists and is visible.
   *
   * @throws ProblemException 429 when {@code owner} already has its most streams open here
   */
  Multi<OutboundSseEvent> stream(UUID uid, Owner owner, Sse sse) {
    StreamHub.Slot slot = hub.reserve(owner);
    Watch watch = new Watch(sse, config.api().eventsHeartbeat().toNanos());
    return Multi.createFrom()
        .<OutboundSseEvent>emitter(
            emitter -> {
              StreamHub.Registration registration =
                  hub.watch(
                      uid,
                      slot,
                      found -> {
                        for (Step step : watch.next(found)) {
                          if (step.end()) {
                            emitter.complete();
                            return;
                          }
                          emitter.emit(step.event());
                        }
                      });
              emitter.onTermination(registration::close);
            })
        .select()
        .first(config.api().eventsMaxDuration());
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

  /** The state of one stream; the hub tells it about its job on one thread, one poll at a time. */
  private final class Watch {
    private final Sse sse;
    private final long heartbeatNanos;
    private Seen last;
    private long lastSentNanos = System.nanoTime();

    Watch(Sse sse, long heartbeatNanos) {
      this.sse = sse;
      this.heartbeatNanos = heartbeatNanos;
    }

    /** What to send for the job as a poll found it: null when the poll failed. */
    List<Step> next(Optional<Job> found) {
      if (found == null) {
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
