package io.asyncjobs.api;

import io.quarkus.runtime.annotations.RegisterForReflection;
import java.util.UUID;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * The answer to an enqueue: where to follow the job.
 *
 * @param uid the job's id
 * @param kind the job's kind
 * @param status its status now: pending, running when the replica that owns its shard started it in
 *     the enqueue's commit, or any status for a replayed Idempotency-Key
 * @param statusUrl the status view; also in the Location header
 * @param eventsUrl the stream of status and progress events
 */
@Schema(name = "Enqueued", description = "A job just enqueued, or the first job of a replayed key")
@RegisterForReflection(registerFullHierarchy = true)
public record EnqueuedView(
    UUID uid,
    String kind,
    @Schema(enumeration = {"pending", "running", "done", "failed"}) String status,
    String statusUrl,
    String eventsUrl) {}
