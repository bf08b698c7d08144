package io.asyncjobs.queue;

import java.util.UUID;

/**
 * What became of one {@link EnqueueRequest}.
 *
 * @param uid the job: the new one, or for a key used before the first job with that key
 * @param created whether it was created by this call (false: its key was used before)
 * @param status its status ({@code pending} when created)
 */
public record Enqueued(UUID uid, boolean created, JobStatus status) {}
