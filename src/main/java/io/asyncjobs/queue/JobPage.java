package io.asyncjobs.queue;

import java.util.List;
import java.util.UUID;

/**
 * One page of jobs, newest first.
 *
 * @param jobs the jobs on this page
 * @param next the cursor for the following page ({@code before} of the next call), or null on the
 *     last page
 */
public record JobPage(List<Job> jobs, UUID next) {}
