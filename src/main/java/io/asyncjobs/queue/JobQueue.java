package io.asyncjobs.queue;

import io.asyncjobs.config.Shards;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * The queue's way in: enqueue one job, an idempotent one, or a list, each a thin call of {@link
 * JobInserter} with {@link EnqueueRequest}s, and the vocabulary of the wake-up channel an enqueue
 * notifies on. No state of its own, so any replica may call it from a request handler. Reads,
 * listing and touch are {@link JobReads}'s; cancel and retry are {@link JobBulk}'s.
 */
@ApplicationScoped
public class JobQueue {

  /**
   * The NOTIFY channel an enqueue wakes the owner on; the payload is the job kind, followed by
   * {@link #FROM_HEAD} when the job is older than the jobs the owner claims next.
   */
  public static final String ENQUEUED_CHANNEL = "jobs_enqueued";

  /**
   * Marks a notification for a job that became pending again (an admin retry): its uid is older
   * than what the owner claimed lately, so the owner's next claim starts from the head of the
   * queue.
   */
  public static final String FROM_HEAD = ":head";

  /**
   * Follows the kind in a notification sent when an admin paused or resumed it: every runner of the
   * kind reads its settings again and, resumed, claims from the head at once.
   */
  public static final String SETTINGS_CHANGED = ":settings";

  /** Separates the kind from the shard in a wake-up payload: {@code zip/zip-3}. */
  public static final String SHARD_SEPARATOR = "/";

  /**
   * The wake-up payload {@link #wakePayload} makes in SQL, made here: the kind, {@code /shard}
   * unless the shard is {@link Shards#ALL}, and {@link #FROM_HEAD} when the claim must start from
   * the head of the queue.
   */
  static String wakeUpPayload(String kind, String shard, boolean fromHead) {
    return kind
        + (Shards.ALL.equals(shard) ? "" : SHARD_SEPARATOR + shard)
        + (fromHead ? FROM_HEAD : "");
  }

  /**
   * The wake-up payload of the rows {@code alias} names: the kind, and {@code /shard} after it when
   * the shard is not {@link Shards#ALL} (so that the default's payload is the kind alone, as before
   * shards).
   */
  static String wakePayload(String alias) {
    return alias
        + ".kind || CASE WHEN "
        + alias
        + ".shard = '"
        + Shards.ALL
        + "' THEN '' ELSE '"
        + SHARD_SEPARATOR
        + "' || "
        + alias
        + ".shard END";
  }

  private final JobInserter inserter;
  private final JobReads reads;

  JobQueue(JobInserter inserter, JobReads reads) {
    this.inserter = inserter;
    this.reads = reads;
  }

  /**
   * Adds a job and returns its uid: pending, or running when this replica owns its shard and starts
   * it at once ({@link LocalStarts}). The row expires one retention period after enqueue; the owner
   * restarts that period when the job finishes, and never sweeps a job that is still pending or
   * running.
   *
   * @param kind the service that will process the job
   * @param payload kind-specific input; stored as JSON
   * @param ownerKind principal kind of the owner, or null
   * @param ownerId principal id of the owner, or null
   * @param preferredName file name for the artifact's download, or null
   * @throws IllegalArgumentException when an argument is malformed
   * @throws QuotaExceededException when the owner would hold more pending jobs of the kind than its
   *     {@code max-pending-per-owner}; nothing is added then
   */
  public UUID enqueue(
      String kind,
      Map<String, Object> payload,
      String ownerKind,
      String ownerId,
      String preferredName) {
    return enqueue(kind, payload, ownerKind, ownerId, preferredName, JobPriority.DEFAULT);
  }

  /**
   * {@link #enqueue(String, Map, String, String, String)} with a claim priority.
   *
   * @param priority {@value JobPriority#MIN} to {@value JobPriority#MAX}, higher first
   */
  public UUID enqueue(
      String kind,
      Map<String, Object> payload,
      String ownerKind,
      String ownerId,
      String preferredName,
      int priority) {
    return enqueue(
            EnqueueRequest.of(kind, owner(ownerKind, ownerId), payload)
                .withPreferredName(preferredName)
                .withPriority(priority))
        .uid();
  }

  /**
   * Adds the job {@code job} asks for, or, for a key its owner used before for the same request,
   * answers the job that holds it.
   *
   * @throws IllegalArgumentException when the request is malformed
   * @throws KeyReusedException when its key was used before for a different request
   * @throws QuotaExceededException when the owner would hold more pending jobs of the kind than its
   *     {@code max-pending-per-owner}; nothing is added then
   */
  public Enqueued enqueue(EnqueueRequest job) {
    return inserter.enqueue(List.of(job)).get(0);
  }

  /**
   * Adds the jobs {@code jobs} ask for, of one kind and owner, in one transaction and list order:
   * {@link JobInserter#enqueue}.
   *
   * @return one outcome per request, in list order
   */
  public List<Enqueued> enqueue(List<EnqueueRequest> jobs) {
    return inserter.enqueue(jobs);
  }

  /**
   * Adds a pending job unless this owner already enqueued one with {@code idempotencyKey}, in which
   * case that first job is returned, whatever it was enqueued with, and nothing is added. For a
   * caller that trusts its own keys; {@link #enqueue(EnqueueRequest)} refuses a key reused for a
   * different request instead.
   *
   * @param idempotencyKey 1 to 200 characters chosen by the caller; requires an owner
   * @return the job's uid and whether it was created now
   */
  public Enqueued enqueueIdempotent(
      String kind,
      Map<String, Object> payload,
      String ownerKind,
      String ownerId,
      String preferredName,
      String idempotencyKey) {
    if (idempotencyKey == null) {
      throw new IllegalArgumentException("idempotency key must be 1 to 200 characters");
    }
    try {
      return enqueue(
          EnqueueRequest.of(kind, owner(ownerKind, ownerId), payload)
              .withPreferredName(preferredName)
              .withIdempotencyKey(idempotencyKey));
    } catch (KeyReusedException e) {
      return new Enqueued(e.firstUid(), false, e.firstStatus());
    }
  }

  /**
   * {@link JobReads#getJob}, kept here because a test that enqueues a job reads it back through the
   * queue it enqueued on (some 150 places); the code under src/main reads through {@link JobReads}.
   */
  public Optional<Job> getJob(UUID uid) {
    return reads.getJob(uid);
  }

  /** The owner of a job enqueued with these two parts, or null for none. */
  private static Owner owner(String ownerKind, String ownerId) {
    if ((ownerKind == null) != (ownerId == null)) {
      throw new IllegalArgumentException("owner kind and owner id go together: give both or none");
    }
    return ownerKind == null ? null : new Owner(ownerKind, ownerId);
  }
}
