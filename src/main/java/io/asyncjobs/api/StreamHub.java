package io.asyncjobs.api;

import io.asyncjobs.config.JobsConfig;
import io.asyncjobs.problem.Problem;
import io.asyncjobs.problem.ProblemException;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobReads;
import io.asyncjobs.queue.Owner;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jboss.logging.Logger;

/**
 * One database poll for every event stream open on this replica: every {@code
 * jobs.api.events-poll-interval} it reads the rows of all watched jobs with one statement per
 * thousand of them (primary-key lookups, without payloads) and hands each stream its job. A
 * thousand open streams cost one statement, not a thousand. Each owner may keep {@code
 * jobs.api.events-max-per-owner} streams open on one replica; one more is refused with 429.
 */
@ApplicationScoped
public class StreamHub {

  private static final Logger LOG = Logger.getLogger(StreamHub.class);

  /** Most uids one poll statement asks for. */
  static final int CHUNK = 1_000;

  /** What a stream is told at each poll. */
  interface Watcher {
    /**
     * The job as the poll found it: empty once it is gone, null when the poll failed (a database
     * hiccup costs one poll, not the stream). Called on the hub's thread; must return quickly.
     */
    void polled(Optional<Job> job);
  }

  /** An open stream's place in the hub; closing it stops the polls and frees the slot. */
  interface Registration extends AutoCloseable {
    @Override
    void close();
  }

  private final JobReads reads;
  private final int maxPerOwner;
  private final long pollMillis;
  private final Map<UUID, Set<Watcher>> watchers = new ConcurrentHashMap<>();
  private final Map<Owner, Integer> perOwner = new ConcurrentHashMap<>();
  private final AtomicInteger polls = new AtomicInteger();
  private volatile ScheduledExecutorService poller;

  StreamHub(JobReads reads, JobsConfig config) {
    this.reads = reads;
    this.maxPerOwner = config.api().eventsMaxPerOwner();
    this.pollMillis = Math.max(1, config.api().eventsPollInterval().toMillis());
  }

  /**
   * Takes one of the owner's places for a stream, before the stream starts.
   *
   * @throws ProblemException 429 when the owner already has its most streams open here
   */
  Slot reserve(Owner owner) {
    boolean[] taken = {false};
    perOwner.compute(
        owner,
        (o, open) -> {
          int now = open == null ? 0 : open;
          taken[0] = now < maxPerOwner;
          return taken[0] ? now + 1 : open;
        });
    if (!taken[0]) {
      throw new ProblemException(
          Problem.of(
              429,
              "too-many-streams",
              "Too many event streams",
              "this owner already has "
                  + maxPerOwner
                  + " event streams open on this replica; close one, or poll the job's status"
                  + " instead"),
          Map.of("Retry-After", "5"));
    }
    return new Slot(owner);
  }

  /**
   * One of an owner's places; given back once, however often it is released. An owner with no
   * stream left is forgotten, so the count stays as small as the owners streaming now.
   */
  final class Slot {
    private final Owner owner;
    private final AtomicBoolean released = new AtomicBoolean();

    private Slot(Owner owner) {
      this.owner = owner;
    }

    void release() {
      if (released.compareAndSet(false, true)) {
        perOwner.computeIfPresent(owner, (o, open) -> open <= 1 ? null : open - 1);
      }
    }
  }

  /**
   * Starts telling {@code watcher} about {@code uid}: at once, then at every poll, until the
   * registration is closed, which also gives the slot back.
   */
  Registration watch(UUID uid, Slot slot, Watcher watcher) {
    watchers.computeIfAbsent(uid, u -> ConcurrentHashMap.newKeySet()).add(watcher);
    startPolling().execute(() -> tell(uid, List.of(watcher), readOne(uid)));
    return () -> {
      watchers.computeIfPresent(
          uid,
          (u, set) -> {
            set.remove(watcher);
            return set.isEmpty() ? null : set;
          });
      slot.release();
    };
  }

  private Optional<Job> readOne(UUID uid) {
    try {
      return Optional.ofNullable(reads.getJobViews(List.of(uid)).get(uid));
    } catch (SQLException e) {
      LOG.debugf(e, "The first poll of an event stream of %s failed", uid);
      return null;
    }
  }

  private void tell(UUID uid, Iterable<Watcher> to, Optional<Job> job) {
    for (Watcher watcher : to) {
      try {
        watcher.polled(job);
      } catch (RuntimeException e) {
        LOG.debugf(e, "An event stream of %s failed", uid);
      }
    }
  }

  /** Streams open on this replica. */
  int openStreams() {
    return watchers.values().stream().mapToInt(Set::size).sum();
  }

  /** Polls run so far; for tests. */
  int polls() {
    return polls.get();
  }

  private synchronized ScheduledExecutorService startPolling() {
    if (poller == null) {
      ScheduledExecutorService executor =
          Executors.newSingleThreadScheduledExecutor(
              r -> {
                Thread t = new Thread(r, "jobs-event-streams");
                t.setDaemon(true);
                return t;
              });
      executor.scheduleWithFixedDelay(
          this::pollSafely, pollMillis, pollMillis, TimeUnit.MILLISECONDS);
      poller = executor;
    }
    return poller;
  }

  void onStop(@Observes ShutdownEvent event) {
    ScheduledExecutorService executor = poller;
    if (executor != null) {
      executor.shutdownNow();
    }
  }

  private void pollSafely() {
    try {
      poll();
    } catch (RuntimeException | Error e) {
      LOG.warnf(e, "The event streams' poll failed");
    }
  }

  /** Reads every watched job and tells its streams. */
  void poll() {
    List<UUID> uids = new ArrayList<>(watchers.keySet());
    if (uids.isEmpty()) {
      return;
    }
    polls.incrementAndGet();
    for (int from = 0; from < uids.size(); from += CHUNK) {
      List<UUID> chunk = uids.subList(from, Math.min(uids.size(), from + CHUNK));
      Map<UUID, Job> found;
      try {
        found = reads.getJobViews(chunk);
      } catch (SQLException e) {
        LOG.debugf(e, "The event streams skipped a poll");
        found = null;
      }
      for (UUID uid : chunk) {
        Set<Watcher> set = watchers.get(uid);
        if (set == null) {
          continue;
        }
        tell(uid, set, found == null ? null : Optional.ofNullable(found.get(uid)));
      }
    }
  }
}
