package io.asyncjobs.operations;

import io.asyncjobs.queue.CardQueries.Counts;
import io.asyncjobs.queue.CardQueries.Percentiles;
import io.quarkus.runtime.annotations.RegisterForReflection;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * The aggregate card of one service, as the admin page shows it.
 *
 * @param service the service's name (its kind)
 * @param title its human title
 * @param counts jobs by status now
 * @param completedLastHour jobs finished (done or failed) in the last hour
 * @param perMinute jobs finished in each of the last 60 minutes, oldest first
 * @param durationMs p50 and p95 processing time of jobs done in the last hour, null without any
 * @param bytesIn bytes read by the jobs kept now
 * @param bytesOut bytes written by the jobs kept now
 * @param items items handled by the jobs kept now
 * @param oldestPendingAgeSeconds how long the oldest pending job has waited, null when none waits
 * @param settings the service's configured, overridden and effective settings
 * @param shards who owns each of the service's shards (one, {@code all}, unless sharding is on)
 * @param pause whether an admin paused the service, since when, by whom and why
 */
@Schema(name = "ServiceCard", description = "One service's figures, settings, shards and pause")
@RegisterForReflection(registerFullHierarchy = true)
public record ServiceCard(
    String service,
    String title,
    Counts counts,
    long completedLastHour,
    List<Long> perMinute,
    Percentiles durationMs,
    long bytesIn,
    long bytesOut,
    long items,
    @Schema(nullable = true) Long oldestPendingAgeSeconds,
    SettingsView settings,
    List<ShardOwners.ShardOwner> shards,
    PauseView pause) {}
