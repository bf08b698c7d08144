package io.asyncjobs.operations;

import io.quarkus.runtime.annotations.RegisterForReflection;
import java.util.List;
import java.util.UUID;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * One page of jobs, newest first.
 *
 * @param jobs the jobs on this page
 * @param next the {@code before} value of the following page, or null on the last page
 * @param nextUrl the following page with the same filters, or null on the last page
 */
@Schema(name = "JobList", description = "One page of jobs, newest first")
@RegisterForReflection(registerFullHierarchy = true)
public record JobListView(
    List<JobView> jobs,
    @Schema(nullable = true, description = "The before value of the next page, or null on the last")
        UUID next,
    @Schema(nullable = true, description = "The next page, or null on the last") String nextUrl) {}
