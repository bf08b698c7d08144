package io.asyncjobs.lock;

import java.time.Instant;

/**
 * The lock as this replica sees it.
 *
 * @param mode which implementation holds it ({@code postgres}, {@code kubernetes}, or {@code none}
 *     for a process that never competes)
 * @param identity this replica's name
 * @param owner whether this replica owns now and may claim
 * @param epoch the fencing epoch of the current or last holding, 0 before any
 * @param since when this replica's current holding began, or null when it does not hold
 * @param trust how far this replica may act on the queue now
 * @param competing whether this replica is trying for (or renewing) the lock; false means it will
 *     never own until something restarts it
 */
public record OwnerStatus(
    String mode,
    String identity,
    boolean owner,
    long epoch,
    Instant since,
    Trust trust,
    boolean competing) {}
