package io.asyncjobs.queue;

import java.time.Instant;
import java.util.Map;

/**
 * One new job with every option it is enqueued with: the one value each way in (a single job, an
 * idempotent one, many, a batch) hands to {@link JobInserter}, so that an option added here reaches
 * every route at once. Start from {@link #of} and set the rest with the withers; {@link
 * JobInserter} checks the values when it adds the job.
 *
 * <p>What comes next belongs here as fields too: a unique key, parent jobs and a schedule. A delay
 * is a {@code runAfter} of now plus the delay, which the route reads from its injected clock. The
 * retry policy is the kind's ({@code max-attempts} in its settings), not a job's; a per-job
 * override would be a field here as well.
 *
 * @param kind the service that will process the job
 * @param owner who the job belongs to, or null for none
 * @param payload kind-specific input, stored as JSON
 * @param preferredName file name for the artifact's download, or null
 * @param priority {@value JobPriority#MIN} to {@value JobPriority#MAX}, higher first
 * @param runAfter the earliest start, or null for as soon as possible: until then the job is
 *     pending but not due, and no claim takes it
 * @param callbackUrl where the outcome is POSTed once the job is finished, or null
 * @param traceparent the W3C traceparent its processing joins, or null
 * @param idempotencyKey 1 to 200 characters chosen by the owner, or null: a key the owner used
 *     before answers the job that holds it instead of adding one
 * @param quotaExempt true for a caller the kind's {@code max-pending-per-owner} does not bind (an
 *     admin)
 */
public record EnqueueRequest(
    String kind,
    Owner owner,
    Map<String, Object> payload,
    String preferredName,
    int priority,
    Instant runAfter,
    String callbackUrl,
    String traceparent,
    String idempotencyKey,
    boolean quotaExempt) {

  /** A job of the default priority, due at once, without a name, callback, trace or key. */
  public static EnqueueRequest of(String kind, Owner owner, Map<String, Object> payload) {
    return new EnqueueRequest(
        kind, owner, payload, null, JobPriority.DEFAULT, null, null, null, null, false);
  }

  /** The owner's principal kind, or null. */
  public String ownerKind() {
    return owner == null ? null : owner.kind();
  }

  /** The owner's id, or null. */
  public String ownerId() {
    return owner == null ? null : owner.id();
  }

  /** This request with a download name. */
  public EnqueueRequest withPreferredName(String name) {
    return new EnqueueRequest(
        kind,
        owner,
        payload,
        name,
        priority,
        runAfter,
        callbackUrl,
        traceparent,
        idempotencyKey,
        quotaExempt);
  }

  /** This request with a claim priority. */
  public EnqueueRequest withPriority(int value) {
    return new EnqueueRequest(
        kind,
        owner,
        payload,
        preferredName,
        value,
        runAfter,
        callbackUrl,
        traceparent,
        idempotencyKey,
        quotaExempt);
  }

  /** This request with an earliest start (null: at once). */
  public EnqueueRequest withRunAfter(Instant at) {
    return new EnqueueRequest(
        kind,
        owner,
        payload,
        preferredName,
        priority,
        at,
        callbackUrl,
        traceparent,
        idempotencyKey,
        quotaExempt);
  }

  /** This request with a callback URL, already checked against the allowed hosts. */
  public EnqueueRequest withCallbackUrl(String url) {
    return new EnqueueRequest(
        kind,
        owner,
        payload,
        preferredName,
        priority,
        runAfter,
        url,
        traceparent,
        idempotencyKey,
        quotaExempt);
  }

  /** This request with the traceparent its processing joins. */
  public EnqueueRequest withTraceparent(String value) {
    return new EnqueueRequest(
        kind,
        owner,
        payload,
        preferredName,
        priority,
        runAfter,
        callbackUrl,
        value,
        idempotencyKey,
        quotaExempt);
  }

  /** This request with an idempotency key (null: none). */
  public EnqueueRequest withIdempotencyKey(String key) {
    return new EnqueueRequest(
        kind,
        owner,
        payload,
        preferredName,
        priority,
        runAfter,
        callbackUrl,
        traceparent,
        key,
        quotaExempt);
  }

  /** This request exempt from the owner's pending quota, or not. */
  public EnqueueRequest withQuotaExempt(boolean exempt) {
    return new EnqueueRequest(
        kind,
        owner,
        payload,
        preferredName,
        priority,
        runAfter,
        callbackUrl,
        traceparent,
        idempotencyKey,
        exempt);
  }
}
