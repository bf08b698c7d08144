package io.asyncjobs.engine;

import io.asyncjobs.queue.JobClaims;
import io.asyncjobs.queue.JobOutcomes;
import io.asyncjobs.queue.JobRecovery;
import io.asyncjobs.queue.JobSweep;
import io.asyncjobs.settings.SettingsStore;
import io.asyncjobs.time.Clock;
import java.time.Duration;

/**
 * What a {@link JobService} needs from the engine, handed over at registration so that a kind's
 * author writes only {@code kind}, {@code title}, {@code process} and {@code cleanup}.
 *
 * @param jobClaims the claim's statements
 * @param jobOutcomes the statements that write what became of tasks
 * @param jobRecovery the statements that rescue and adopt running rows
 * @param jobSweep the retention sweep's statements
 * @param settings per-service settings, read every tick
 * @param clock the current time
 * @param sweepBatchSize expired jobs one sweep batch takes
 * @param sweepBudget how long one tick's sweep may go on
 * @param cleanupRetryDelay how long a job whose cleanup failed waits for the next attempt
 * @param wakeUps whether a finished task wakes its service at once
 * @param claimAheadMax the most jobs claimed ahead of the free threads
 * @param claimAheadUnwrittenMax with claims ahead, the most jobs beyond the threads begun while
 *     their outcomes are not yet committed ({@link StartGate})
 * @param metrics where claims, outcomes and runs are reported
 * @param traces the spans of the jobs processed ({@link JobTraces#OFF} when tracing is off)
 * @param deliveries what sends the callbacks of ended jobs
 */
record EngineContext(
    JobClaims jobClaims,
    JobOutcomes jobOutcomes,
    JobRecovery jobRecovery,
    JobSweep jobSweep,
    SettingsStore settings,
    Clock clock,
    int sweepBatchSize,
    Duration sweepBudget,
    Duration cleanupRetryDelay,
    boolean wakeUps,
    int claimAheadMax,
    int claimAheadUnwrittenMax,
    EngineMetrics metrics,
    JobTraces traces,
    Deliveries deliveries) {}
