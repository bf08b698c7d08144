package io.asyncjobs.operations;

import io.quarkus.runtime.annotations.RegisterForReflection;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * Which jobs a bulk cancel or retry acts on. Every filter is optional, but at least one must be
 * given, or {@code all: true}, so that an empty body never acts on every job by accident.
 *
 * @param kind only jobs of this kind
 * @param status only jobs in this status: pending or running for a cancel (default both), failed
 *     for a retry (the default)
 * @param ownerKind with {@code ownerId}: only this owner's jobs
 * @param ownerId with {@code ownerKind}: only this owner's jobs
 * @param createdBefore only jobs created before this RFC 3339 time
 * @param createdAfter only jobs created after this RFC 3339 time
 * @param all true to act on every job the other fields allow, without any filter
 * @param dryRun true to only count the jobs that would be acted on
 */
@Schema(name = "BulkRequest", description = "Which jobs a bulk cancel or retry acts on")
@RegisterForReflection(registerFullHierarchy = true)
public record BulkRequest(
    @Schema(nullable = true, example = "zip") String kind,
    @Schema(
            nullable = true,
            enumeration = {"pending", "running", "failed"},
            description = "pending or running for a cancel (default both); failed for a retry",
            example = "pending")
        String status,
    @Schema(nullable = true, example = "user") String ownerKind,
    @Schema(nullable = true, example = "alice") String ownerId,
    @Schema(
            nullable = true,
            format = "date-time",
            description = "RFC 3339",
            example = "2026-05-01T08:00:00Z")
        String createdBefore,
    @Schema(
            nullable = true,
            format = "date-time",
            description = "RFC 3339",
            example = "2026-04-30T08:00:00Z")
        String createdAfter,
    @Schema(
            nullable = true,
            description = "Act on every job the statuses allow, with no other filter",
            example = "false")
        Boolean all,
    @Schema(nullable = true, description = "Only count; change nothing", example = "true")
        Boolean dryRun) {}
