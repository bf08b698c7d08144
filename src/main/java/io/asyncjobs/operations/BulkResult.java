package io.asyncjobs.operations;

import io.quarkus.runtime.annotations.RegisterForReflection;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * What a bulk cancel or retry did.
 *
 * @param matched jobs the filter matched
 * @param affected jobs cancelled or retried; 0 in a dry run
 * @param dryRun whether it only counted
 * @param batches batches of up to 1,000 jobs it took, each its own transaction
 */
@Schema(name = "BulkResult", description = "What a bulk cancel or retry did")
@RegisterForReflection(registerFullHierarchy = true)
public record BulkResult(
    @Schema(example = "2500") long matched,
    @Schema(description = "0 in a dry run", example = "2500") long affected,
    @Schema(example = "false") boolean dryRun,
    @Schema(description = "Batches of up to 1,000 jobs, each its own transaction", example = "3")
        int batches) {}
