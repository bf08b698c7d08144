package io.asyncjobs.operations;

import io.quarkus.runtime.annotations.RegisterForReflection;
import java.util.List;
import java.util.UUID;

/**
 * One page of jobs, newest first.
 *
 * @param jobs the jobs on this page
 * @param next the {@code before} value of the following page, or null on the last page
 * @param nextUrl the following page with the same filters, or null on the last page
 */
@RegisterForReflection(registerFullHierarchy = true)
public record JobListView(List<JobView> jobs, UUID next, String nextUrl) {}
